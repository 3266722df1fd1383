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
const OUT = join(ROOT, 'node_modules/.cache/orchd-log-test/src/log');
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
  await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', BUILD_CONFIG], { cwd: ROOT, timeout: 60_000 });
}

interface WriterRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** seq → digest of every acknowledged append. */
  acked: Map<number, string>;
  broken: number[];
  lines: string[];
  stderr: string;
}

interface WriterOptions {
  path: string;
  mode: 'write' | 'compact';
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
  const run: WriterRun = { code: null, signal: null, acked: new Map(), broken: [], lines: [], stderr: '' };
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
