/**
 * Checkpoints along the log after kill -9 (issue 40): a child process runs a Store that saves a
 * checkpoint every 40 entries while it writes, and dies by SIGKILL at a crash point
 * (src/log/crash-point.ts) or at a random moment. Then every checkpoint left beside the log, the
 * whole one and each index copy, loads to the fold of the log at its version; the state at a
 * version read through them is that fold; and a restart starts from the newest and holds the fold
 * at the head. The child runs the compiled store (Node 20 cannot run TypeScript), built into this
 * tree's dist/.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkpointsBeside, readParts } from '../../src/log/checkpoint-file.js';
import { entriesAt } from '../../src/log/entries-at.js';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import type { LogEntry } from '../../src/log/log.js';
import { decodeCheckpoint } from '../../src/store/checkpoint-format.js';
import { LogObjects } from '../../src/store/checkpoint-objects.js';
import { Store } from '../../src/store/store.js';
import { openCheckpointState } from '../../src/timetravel/sources/checkpoint-state.js';
import { randomInt } from '../helpers/rng.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'dist/.orchd-store-test');
const WRITER = fileURLToPath(new URL('./fixtures/store-crash-writer.mjs', import.meta.url));

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'test/store/fixtures/tsconfig.json'), '--outDir', OUT], {
    cwd: ROOT,
    timeout: 120_000,
  });
}, 130_000);

/** Runs the writer until it dies; its exit signal and the seqs it acknowledged. */
function runWriter(path: string, o: { crashPoint?: string; killAfterMs?: number }): Promise<{ signal: NodeJS.Signals | null; acked: number[]; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ORCHD_CRASH_POINT;
  if (o.crashPoint) env.ORCHD_CRASH_POINT = o.crashPoint;
  const child = spawn(process.execPath, [WRITER, pathToFileURL(join(OUT, 'src')).href, path, '8000'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const acked: number[] = [];
  let stderr = '';
  let partial = '';
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  };
  const timers = [setTimeout(kill, 25_000)];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('ack ')) acked.push(Number(line.slice(4)));
      else if (line === 'open' && o.killAfterMs !== undefined) timers.push(setTimeout(kill, o.killAfterMs));
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      timers.forEach(clearTimeout);
      resolve({ signal, acked, stderr });
    });
  });
}

const line = (key: string, seq: number, obj: unknown) => `${key} ${seq} ${JSON.stringify(obj)}`;

/** The fold of the log at each of the versions asked (key order). */
async function foldsAt(log: LevelDbLog, versions: number[]): Promise<Map<number, string[]>> {
  const at = new Map<string, LogEntry>();
  const out = new Map<number, string[]>();
  const snap = () => [...at.values()].map((e) => line(e.key, e.seq, e.value)).sort();
  if (versions.includes(0)) out.set(0, []);
  for await (const page of log.read(1, log.lastSeq)) {
    for (const e of page) {
      if (e.type === 'delete') at.delete(e.key);
      else at.set(e.key, e);
      if (versions.includes(e.seq)) out.set(e.seq, snap());
    }
  }
  return out;
}

describe('checkpoints along the log after kill -9 of a store', () => {
  it.each([
    ['SIGKILL at a random moment', { killAfterMs: randomInt(1500, 3000) }],
    ['crash point before-batch-write', { crashPoint: `before-batch-write:${randomInt(150, 300)}` }],
    ['crash point after-batch-write-before-ack', { crashPoint: `after-batch-write-before-ack:${randomInt(150, 300)}` }],
    ['crash point checkpoint-before-rename', { crashPoint: `checkpoint-before-rename:${randomInt(3, 6)}` }],
    ['crash point checkpoint-between-renames', { crashPoint: `checkpoint-between-renames:${randomInt(3, 6)}` }],
  ] as const)('%s: each checkpoint left loads to the fold at its version, reads through them are the fold, a restart holds the fold', async (_name, o) => {
    const path = join(tempDir('orchd-store-crash-'), 'log');
    const run = await runWriter(path, o);
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect(run.acked.length).toBeGreaterThan(0);
    const beside = checkpointFile(path);
    const found = checkpointsBeside(beside);
    expect(found.length).toBeGreaterThan(1);

    const log = new LevelDbLog({ path });
    await log.open();
    let head: number;
    let folds: Map<number, string[]>;
    try {
      head = log.lastSeq;
      expect(head).toBeGreaterThanOrEqual(Math.max(...run.acked));
      const mid = Math.floor(head / 2);
      folds = await foldsAt(log, [...found.map((c) => c.seq), mid, head]);
      for (const c of found) {
        expect(c.seq).toBeLessThanOrEqual(head);
        const view = await decodeCheckpoint({ seq: c.seq, parts: readParts(c.file, c.seq) }, (seqs) => entriesAt(log, seqs));
        expect(view, `${c.file} loads`).toBeDefined();
        expect([...view!.objects()].map((s) => line(s.key, s.seq, s.obj)).sort(), `${c.file}`).toEqual(folds.get(c.seq));
        // As a start reads it: each part's objects by a synchronous read when first used.
        const onUse = await decodeCheckpoint({ seq: c.seq, parts: readParts(c.file, c.seq) }, undefined, new LogObjects(log.entrySync));
        expect([...onUse!.objects()].map((s) => line(s.key, s.seq, s.obj)).sort(), `${c.file}, objects read on use`).toEqual(folds.get(c.seq));
      }
      // Reads at a version through the checkpoints (the whole one first), on both sides of them.
      const state = openCheckpointState(beside, log)!;
      for (const rv of [mid, found[found.length - 1].seq, found[0].seq, head]) {
        const got: string[] = [];
        for await (const page of (await state.pages(rv, ['g/x', 'g/y'], ''))!) for (const s of page) got.push(line(s.key, s.seq, s.obj));
        expect(got, `state at ${rv}`).toEqual(folds.get(rv));
      }
    } finally {
      await log.close();
    }

    const again = new LevelDbLog({ path });
    await again.open();
    const store = new Store({ log: again, checkpointEvery: 1_000_000 });
    try {
      await store.start();
      expect(store.startedFrom.checkpointSeq).toBe(found[0].seq);
      expect([...store.view.objects()].map((s) => line(s.key, s.seq, s.obj)).sort()).toEqual(folds.get(head));
    } finally {
      await store.close();
      await again.close();
    }
  });
});
