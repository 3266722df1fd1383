import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Level } from 'level';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEntry, readSeq } from '../../src/log/codec.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { ALONG_KEPT, alongFile, checkpointsBeside, loadCheckpointFile, readParts } from '../../src/log/checkpoint-file.js';
import { tempDir } from '../helpers/temp.js';
import { expectIndexAnswersAsFold, rawFolder } from './index-check.js';
import { randomInt } from '../helpers/rng.js';

/*
 * Crash tests at the log level: a child process appends as fast as it can and dies by SIGKILL, from
 * its parent at a random moment or from a crash point (src/log/crash-point.ts); then the parent
 * reopens the log and checks what an acknowledgement promises. The child runs the compiled log
 * (Node 20 cannot run TypeScript), built from src/log alone into a cache folder when it is stale.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_CONFIG = join(ROOT, 'test/log/fixtures/tsconfig.json');
/** Under this tree's own folder, not node_modules: a worktree's node_modules is a link shared with other trees. */
const OUT_ROOT = join(ROOT, 'dist/.orchd-log-test');
const OUT = join(OUT_ROOT, 'src/log');
const MODULE_URL = pathToFileURL(join(OUT, 'leveldb-log.js')).href;
const WRITER = fileURLToPath(new URL('./fixtures/crash-writer.mjs', import.meta.url));

/** Same digest as the writer's: a value read back must be the value acknowledged. */
const digestOf = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

async function buildIfStale(): Promise<void> {
  const src = join(ROOT, 'src/log');
  const sources = (await readdir(src)).filter((f) => f.endsWith('.ts'));
  const mtime = async (p: string) => (await stat(p).catch(() => undefined))?.mtimeMs ?? 0;
  const newestSource = Math.max(...(await Promise.all(sources.map((f) => mtime(join(src, f))))));
  const oldestOutput = Math.min(...(await Promise.all(sources.map((f) => mtime(join(OUT, f.replace(/\.ts$/, '.js')))))));
  if (oldestOutput > newestSource) return;
  await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', BUILD_CONFIG, '--outDir', OUT_ROOT], { cwd: ROOT, timeout: 60_000 });
}

interface WriterRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** seq → digest of every acknowledged append. */
  acked: Map<number, string>;
  /** The seqs of the checkpoints the writer said it saved. */
  saved: number[];
  broken: number[];
  lines: string[];
  stderr: string;
}

interface WriterOptions {
  path: string;
  mode: 'write' | 'compact' | 'checkpoint';
  /** ORCHD_CRASH_POINT for the child. */
  crashPoint?: string;
  /** SIGKILL the child this long after its log opened. */
  killAfterMs?: number;
  /** RLIMIT_FSIZE in 512-byte blocks: writes past it fail with EFBIG. */
  fileSizeBlocks?: number;
  /** The child stops by itself after this long. */
  maxMs?: number;
}

function runWriter(o: WriterOptions): Promise<WriterRun> {
  const maxMs = o.maxMs ?? 5000;
  const args = [WRITER, MODULE_URL, o.path, o.mode, String(maxMs)];
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ORCHD_CRASH_POINT;
  if (o.crashPoint) env.ORCHD_CRASH_POINT = o.crashPoint;
  // exec keeps the pid: the shell becomes the node process.
  const child =
    o.fileSizeBlocks === undefined
      ? spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', 'ulimit -f "$1" && shift && exec "$@"', 'sh', String(o.fileSizeBlocks), process.execPath, ...args], {
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  const run: WriterRun = { code: null, signal: null, acked: new Map(), saved: [], broken: [], lines: [], stderr: '' };
  const timers: NodeJS.Timeout[] = [];
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  };
  // Whatever happens, the child does not outlive its budget.
  timers.push(setTimeout(kill, maxMs + 15_000));
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      run.lines.push(line);
      const [what, a, b] = line.split(' ');
      if (what === 'ack') run.acked.set(Number(a), b);
      else if (what === 'broken') run.broken.push(Number(a));
      else if (what === 'checkpoint') run.saved.push(Number(a));
      else if (what === 'open' && o.killAfterMs !== undefined) timers.push(setTimeout(kill, o.killAfterMs));
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (run.stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      timers.forEach(clearTimeout);
      Object.assign(run, { code, signal });
      resolve(run);
    });
  });
}

interface Found {
  firstSeq: number;
  lastSeq: number;
  /** Entries still stored below firstSeq (a compaction's deletes that a crash cut short). */
  belowHorizon: number;
}

/** Reopens the log and checks every promise an acknowledgement made; returns what it found. */
async function verify(path: string, acked: Map<number, string>): Promise<Found> {
  // Every stored entry decodes, including any left below the horizon: nothing is half-written.
  const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  const stored: number[] = [];
  try {
    const it = db.iterator({ lt: Buffer.from([0xff]), highWaterMarkBytes: 1 << 20 });
    for (let page = await it.nextv(1000); page.length > 0; page = await it.nextv(1000)) {
      for (const [k, v] of page) stored.push(decodeEntry(readSeq(k), v).seq);
    }
    await it.close();
  } finally {
    await db.close();
  }

  // The version index's rows are exactly the stored entries: they were written and deleted in the same batches.
  const raw = await rawFolder(path);
  expect(raw.rows.map((r) => `${r.key} ${r.version}`).sort()).toEqual(raw.entries.map((e) => `${e.key} ${e.type === 'delete' ? -e.seq : e.seq}`).sort());

  // Opened without building an index: the one the crash left is whole as it is.
  const log = new LevelDbLog({ path, buildIndex: false });
  await log.open();
  try {
    const { firstSeq, lastSeq } = log;
    // And it answers as folding them does.
    expect(log.index).toBeDefined();
    await expectIndexAnswersAsFold(log.index!, raw.entries, [firstSeq - 1, Math.floor((firstSeq + lastSeq) / 2), lastSeq], ['', 'obj-1']);
    const maxAcked = Math.max(0, ...acked.keys());
    expect(lastSeq).toBeGreaterThanOrEqual(maxAcked);
    // Contiguous from firstSeq to lastSeq, and each acknowledged value exactly as acknowledged.
    let expected = firstSeq;
    const mismatches: number[] = [];
    for await (const page of log.read(firstSeq)) {
      for (const e of page) {
        expect(e.seq).toBe(expected++);
        const want = acked.get(e.seq);
        if (want !== undefined && digestOf(e.value) !== want) mismatches.push(e.seq);
      }
    }
    expect(expected - 1).toBe(lastSeq);
    expect(mismatches).toEqual([]);
    const lost = [...acked.keys()].filter((seq) => seq >= firstSeq && seq > lastSeq);
    expect(lost).toEqual([]);
    // And the log goes on from there, without reusing a seq.
    const next = log.append({ type: 'put', key: 'after-crash', value: { ok: true } });
    expect(next.seq).toBe(lastSeq + 1);
    await next.durable;
    return { firstSeq, lastSeq, belowHorizon: stored.filter((s) => s < firstSeq).length };
  } finally {
    await log.close();
  }
}

async function tempPath(): Promise<string> {
  const dir = tempDir('orchd-log-crash-', { until: 'file' });
  return join(dir, 'log');
}

beforeAll(buildIfStale);

describe('LevelDbLog after a crash', () => {
  it.each([
    ['SIGKILL at a random moment while appending', { mode: 'write', killAfterMs: randomInt(300, 1000) }],
    ['SIGKILL at a random moment while appending and compacting', { mode: 'compact', killAfterMs: randomInt(300, 1000) }],
    ['crash point before-batch-write', { mode: 'write', crashPoint: `before-batch-write:${randomInt(20, 60)}` }],
    ['crash point after-batch-write-before-ack', { mode: 'write', crashPoint: `after-batch-write-before-ack:${randomInt(20, 60)}` }],
  ] as const)('%s: every acknowledged entry is there, exact and contiguous', async (_name, o) => {
    const path = await tempPath();
    const run = await runWriter({ path, ...o });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect(run.acked.size).toBeGreaterThan(0);
    const found = await verify(path, run.acked);
    if (o.mode === 'write') expect(found.firstSeq).toBe(1);
    if ('crashPoint' in o && o.crashPoint.startsWith('after-batch-write-before-ack')) {
      // The batch that was written but never acknowledged is on disk all the same.
      expect(found.lastSeq).toBeGreaterThan(Math.max(...run.acked.keys()));
    }
  });

  it('crash point compact-after-horizon: the stored horizon holds though its deletes never ran', async () => {
    const path = await tempPath();
    const run = await runWriter({ path, mode: 'compact', crashPoint: 'compact-after-horizon:2' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const found = await verify(path, run.acked);
    expect(found.firstSeq).toBeGreaterThan(1);
    expect(found.belowHorizon).toBeGreaterThan(0);
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      await expect(async () => {
        for await (const page of log.read(found.firstSeq - 1)) void page;
      }).rejects.toMatchObject({ code: 'COMPACTED' });
      // The next compaction deletes what the crash left below the old horizon.
      await log.compact(log.firstSeq + 1);
    } finally {
      await log.close();
    }
    expect((await verify(path, run.acked)).belowHorizon).toBe(0);
  });

  it("two crashes in a row: the second run continues the first one's seqs", async () => {
    const path = await tempPath();
    const first = await runWriter({ path, mode: 'write', killAfterMs: randomInt(300, 600) });
    expect(first.signal).toBe('SIGKILL');
    const afterFirst = await verify(path, first.acked);
    const second = await runWriter({ path, mode: 'write', killAfterMs: randomInt(300, 600) });
    expect(second.signal).toBe('SIGKILL');
    expect(Math.min(...second.acked.keys())).toBeGreaterThan(afterFirst.lastSeq + 1);
    await verify(path, new Map([...first.acked, ...second.acked]));
  });

  it('a write that fails for real (EFBIG past a file size limit) breaks the log, and what was acknowledged survives', async () => {
    const path = await tempPath();
    const run = await runWriter({ path, mode: 'write', fileSizeBlocks: 2048 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.broken.length).toBeGreaterThan(0);
    expect(run.lines).toContain('refused BROKEN');
    expect(run.acked.size).toBeGreaterThan(0);
    // Nothing is acknowledged after a batch failed.
    expect(Math.max(...run.acked.keys())).toBeLessThan(Math.min(...run.broken));
    await verify(path, run.acked);
  });

  it('a misspelt crash point stops the process when the log loads', async () => {
    const run = await runWriter({ path: await tempPath(), mode: 'write', crashPoint: 'before-batch-writ' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('ORCHD_CRASH_POINT=before-batch-writ');
    expect(run.acked.size).toBe(0);
  });
});

/**
 * Every checkpoint beside the log after the crash (the whole one and the index copies along the
 * log) is whole and holds the fold of the log at its seq; a restart's choice is the newest of them.
 */
async function verifyCheckpoints(path: string, saved: number[]): Promise<{ seqs: number[]; newest: number | undefined }> {
  const beside = join(path, 'orchd-checkpoint');
  const found = checkpointsBeside(beside);
  const log = new LevelDbLog({ path });
  await log.open();
  try {
    const fold = new Map<string, [number, string]>();
    const foldAt = new Map<number, Map<string, [number, string]>>();
    const wanted = new Set(found.map((c) => c.seq));
    for await (const page of log.read(1, log.lastSeq)) {
      for (const e of page) {
        fold.set(e.key, [e.seq, digestOf(e.value)]);
        if (wanted.has(e.seq)) foldAt.set(e.seq, new Map(fold));
      }
    }
    for (const c of found) {
      // Never past what the log holds: a checkpoint is saved only of durable entries.
      expect(c.seq).toBeLessThanOrEqual(log.lastSeq);
      const at = foldAt.get(c.seq)!;
      const keys = [...at.keys()].sort();
      const parts: Buffer[] = [];
      for await (const p of readParts(c.file, c.seq)) parts.push(p.read(0, p.length));
      expect(parts[0].toString()).toBe('crash-cp');
      const index = parts.slice(1).map((p) => (c.indexOnly ? p : p.subarray(0, p.indexOf('}') + 1)).toString());
      expect(index.map((j) => JSON.parse(j) as { k: string[]; s: number[] }).flatMap(({ k, s }) => k.map((x, i) => `${x} ${s[i]}`))).toEqual(keys.map((k) => `${k} ${at.get(k)![0]}`));
      if (!c.indexOnly)
        expect(
          parts
            .slice(1)
            .map((p) => p.subarray(p.indexOf('}') + 1).toString())
            .join(''),
        ).toBe(keys.map((k) => at.get(k)![1]).join(''));
    }
    // The newest ALONG_KEPT checkpoints the writer said it saved are there (older ones were removed).
    for (const seq of saved.slice(-ALONG_KEPT)) expect(found.some((c) => c.seq === seq && c.indexOnly)).toBe(true);
    const loaded = await loadCheckpointFile(beside);
    expect(loaded?.seq).toBe(found[0]?.seq);
    return { seqs: found.map((c) => c.seq), newest: loaded?.seq };
  } finally {
    await log.close();
  }
}

describe('checkpoints along the log after a crash', () => {
  it.each([
    ['SIGKILL at a random moment while appending and saving checkpoints', { killAfterMs: randomInt(800, 1600) }],
    ['crash point before-batch-write while saving checkpoints', { crashPoint: `before-batch-write:${randomInt(60, 120)}` }],
    ['crash point checkpoint-before-rename', { crashPoint: `checkpoint-before-rename:${randomInt(2, 4)}` }],
    ['crash point checkpoint-between-renames', { crashPoint: `checkpoint-between-renames:${randomInt(2, 4)}` }],
  ] as const)('%s: every checkpoint left is whole and is the fold of the log at its seq', async (name, o) => {
    const path = await tempPath();
    const run = await runWriter({ path, mode: 'checkpoint', maxMs: 8000, ...o });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect(run.saved.length).toBeGreaterThan(0);
    await verify(path, run.acked);
    const { seqs, newest } = await verifyCheckpoints(path, run.saved);
    const last = Math.max(...run.saved);
    if (name.includes('before-rename')) {
      // The save cut short left neither of its files: the newest is the last one saved.
      expect(newest).toBe(last);
    }
    if (name.includes('between-renames')) {
      // Its index copy is in, the whole one not yet: a restart takes the copy, the newer of the two.
      expect(newest).toBeGreaterThan(last);
      expect(seqs[0]).toBe(newest);
      expect(checkpointsBeside(join(path, 'orchd-checkpoint')).find((c) => !c.indexOnly)?.seq).toBe(last);
      expect(alongFile(join(path, 'orchd-checkpoint'), newest!)).toBe(checkpointsBeside(join(path, 'orchd-checkpoint'))[0].file);
    }
  });
});
