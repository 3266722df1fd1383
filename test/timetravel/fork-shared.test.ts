import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointsBeside } from '../../src/log/checkpoint-file.js';
import { SEQ_BYTES } from '../../src/log/codec.js';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import { INDEX_RANGE } from '../../src/log/version-index.js';
import { folderBytes, mtimes, setWritable } from '../helpers/folder-contents.js';
import { call, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { builtCli, isReady, killAll, spawnServer } from '../server/child.js';
import { EVENTS, createEvent, createNamespace, deleteEvent, labelEvent } from '../watch/objects.js';
import { run } from './helpers.js';

/*
 * Forks that share (issue 40): `orchd fork --source-data-dir` links the source's LevelDB tables
 * instead of copying them, and cuts its own tail after N. The source folder (two servers' runs, its
 * log pressed into tables, a checkpoint at its head) is forked near its start, in its middle and at
 * its head, and from a copy of it that cannot be written. Each fork answers every Exact list at
 * every version up to N as the source does; no entry, version index row or checkpoint past N is read
 * from it (the source's entries past N stay in the shared tables, behind the fork's end); its first
 * writes take N + 1 on, over them, and `orchd history` of an object the source changed after N shows
 * none of those; the source is unchanged to the byte and the modification time.
 */

const NS = 'shared';
const LISTS = [`${EVENTS}/events`, '/api/v1/namespaces', '/apis/rbac.authorization.orch.io/v1/clusterroles'];

let work: string;
let source: string;
let readOnly: string;
/**
 * The fork points: near the start, the first run's head (the middle), one before the head (a tail
 * short enough that the cut reads its records for their keys, not the index), the head.
 */
const at: Record<'start' | 'middle' | 'late' | 'head', number> = { start: 0, middle: 0, late: 0, head: 0 };
/** The versions the source gave e1 after the middle. */
let e1After: number[] = [];
let before: { bytes: Buffer; times: string[] };
let after: { bytes: Buffer; times: string[] };

const forkOf = (name: string) => join(work, `fork-${name}`);

/** An Exact list's items as names, versions and labels, or the status of its refusal. */
async function listAt(base: string, path: string, rv: number): Promise<string[] | number> {
  const r = await call(base, 'GET', `${path}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
  if (r.status !== 200) return r.status;
  return r.body.items.map((o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name} ${o.metadata.resourceVersion} ${JSON.stringify(o.metadata.labels ?? {})}`);
}

/**
 * The fork's log as a server reads it: its last entry, and every version its index gives past
 * `above` (of every key that has a row in the tables, the source's rows past the end included).
 */
async function tailOf(dir: string, above: number): Promise<{ last: number; rowsPast: number[] }> {
  const db = new Level<Buffer, Buffer>(join(dir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  const keys = new Set<string>();
  try {
    for await (const row of db.keys(INDEX_RANGE)) keys.add(row.toString('utf8', 2, row.length - SEQ_BYTES - 1));
  } finally {
    await db.close();
  }
  const log = new LevelDbLog({ path: join(dir, 'log') });
  await log.open();
  try {
    const rowsPast: number[] = [];
    for (const key of keys) for (const v of await log.index!.versionsOf(key)) if (Math.abs(v) > above) rowsPast.push(v);
    for await (const page of log.index!.liveAt('', Number.MAX_SAFE_INTEGER)) for (const r of page) if (r.seq > above) rowsPast.push(r.seq);
    return { last: log.lastSeq, rowsPast };
  } finally {
    await log.close();
  }
}

const tables = (dir: string) => readdirSync(join(dir, 'log')).filter((n) => n.endsWith('.ldb') || n.endsWith('.sst'));

beforeAll(async () => {
  work = tempDir('orchd-fork-shared-');
  source = join(work, 'source');
  const first = await startServer({ dataDir: source });
  try {
    await createNamespace(first.url, NS);
    at.start = await createEvent(first.url, 'e0', NS);
    for (let i = 1; i < 5; i++) await createEvent(first.url, `e${i}`, NS);
    await labelEvent(first.url, 'e1', { step: '2' }, NS);
    await deleteEvent(first.url, 'e2', NS);
    at.middle = await labelEvent(first.url, 'e1', { step: '3' }, NS);
  } finally {
    await first.close();
  }
  // The second run goes on past the middle: e1 first of all, so the forks' own first writes take its versions.
  const second = await startServer({ dataDir: source });
  try {
    e1After.push(await labelEvent(second.url, 'e1', { step: 'source' }, NS));
    await deleteEvent(second.url, 'e3', NS);
    await createEvent(second.url, 'later', NS);
    e1After.push(await labelEvent(second.url, 'e1', { step: 'source-2' }, NS));
    at.head = await createEvent(second.url, 'last', NS);
    at.late = at.head - 1;
  } finally {
    await second.close();
  }
  e1After = e1After.filter((v) => v > at.middle);
  // A folder that has run for a while holds its log in tables, not only in its write-ahead log.
  const db = new Level<Buffer, Buffer>(join(source, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  await (db as unknown as { compactRange(a: Buffer, b: Buffer): Promise<void> }).compactRange(Buffer.alloc(1), Buffer.alloc(1, 0xff));
  await db.close();
  readOnly = join(work, 'read-only');
  cpSync(source, readOnly, { recursive: true, preserveTimestamps: true });
  setWritable(readOnly, false);
  before = { bytes: await folderBytes(source), times: mtimes(source) };
  for (const [name, n] of Object.entries(at)) {
    const r = await run('fork', '--source-data-dir', source, '--at', String(n), '--data-dir', forkOf(name));
    expect([name, r.code, r.err]).toEqual([name, 0, '']);
  }
  after = { bytes: await folderBytes(source), times: mtimes(source) };
  const r = await run('fork', '--source-data-dir', readOnly, '--at', String(at.middle), '--data-dir', forkOf('read-only'));
  expect([r.code, r.err]).toEqual([0, '']);
  await builtCli();
}, 300_000);

afterAll(async () => {
  await killAll();
  // chattr +i would stop the temp folder's removal.
  if (readOnly) setWritable(readOnly, true);
});

describe('orchd fork --source-data-dir shares the source', () => {
  it('leaves every byte and modification time of the source as it was', () => {
    expect(tables(source).length).toBeGreaterThan(0);
    expect(after.times).toEqual(before.times);
    expect(after.bytes.equals(before.bytes)).toBe(true);
  });

  it("links the source's table files rather than copying them, at every fork point", () => {
    for (const name of Object.keys(at)) {
      const shared = tables(source).filter((t) => tables(forkOf(name)).includes(t));
      expect([name, shared.length]).toEqual([name, expect.any(Number)]);
      expect(shared.length).toBeGreaterThan(0);
      for (const t of shared) expect([name, t, statSync(join(forkOf(name), 'log', t)).ino]).toEqual([name, t, statSync(join(source, 'log', t)).ino]);
    }
  });

  it('holds no entry, version index row or checkpoint past N', async () => {
    // Each run's stop saved a checkpoint (and its copy along the log): at the middle, and at the head.
    const seqsBeside = (dir: string) => checkpointsBeside(checkpointFile(join(dir, 'log'))).map((c) => c.seq);
    expect(seqsBeside(source)).toEqual([at.head, at.head, at.middle]);
    for (const [name, n] of Object.entries(at)) {
      expect([name, await tailOf(forkOf(name), n)]).toEqual([name, { last: n, rowsPast: [] }]);
      // Where the source has none at N, the fork writes an index-only one at N, cut from a later one's heads.
      const kept = seqsBeside(source).filter((seq) => seq <= n);
      expect([name, seqsBeside(forkOf(name))]).toEqual([name, kept.includes(n) ? kept : [n, ...kept]]);
    }
    // Its server starts from that checkpoint at N, and folds nothing.
    for (const [name, from] of [
      ['head', at.head],
      ['middle', at.middle],
      ['late', at.late],
      ['start', at.start],
    ] as const) {
      const server = await spawnServer(forkOf(name));
      const ready = await server.waitForLine(isReady);
      expect([name, ready.checkpointSeq, ready.replayed]).toEqual([name, from, at[name] - from]);
      server.signal('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
  });

  it('answers every Exact list at every version up to N as the source does (the read-only copy too)', async () => {
    const original = await startServer({ dataDir: join(work, 'source') });
    try {
      for (const [name, n] of [...Object.entries(at), ['read-only', at.middle] as const]) {
        const fork = await startServer({ dataDir: forkOf(name) });
        try {
          for (let v = 1; v <= n; v++) {
            for (const path of LISTS) expect([name, v, path, await listAt(fork.url, path, v)]).toEqual([name, v, path, await listAt(original.url, path, v)]);
          }
          expect(Number((await call(fork.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion)).toBe(n);
        } finally {
          await fork.close();
        }
      }
    } finally {
      await original.close();
    }
  });

  it("takes writes from N + 1, and the source's versions past N are in none of its answers", async () => {
    const dir = forkOf('middle');
    // As many writes as take the versions the source gave e1 after the middle, and fewer than the
    // source's tail: past the fork's end its tables still hold the source's entries.
    const count = Math.max(...e1After) - at.middle;
    expect(at.middle + count).toBeLessThan(at.head);
    const fork = await startServer({ dataDir: dir });
    const written: number[] = [];
    try {
      for (let i = 0; i < count; i++) written.push(await createEvent(fork.url, `branch-${i}`, NS));
    } finally {
      await fork.close();
    }
    expect(written).toEqual(Array.from({ length: count }, (_, i) => at.middle + 1 + i));
    const versions = async (d: string) =>
      (await run('history', 'events/e1', '-n', NS, '--data-dir', d, '-o', 'json-patch')).out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const theirs = await versions(source);
    const mine = await versions(dir);
    expect(theirs.map((v) => Number(v.resourceVersion))).toEqual(expect.arrayContaining(e1After));
    expect(mine).toEqual(theirs.filter((v) => Number(v.resourceVersion) <= at.middle));
    expect(mine.map((v) => v.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED']);
    // Its log ends at its own last write, also once reopened; the source's later entries are in no answer.
    const log = (await run('log', '--data-dir', dir, '-o', 'json')).out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(Number(log[log.length - 1].resourceVersion)).toBe(at.middle + count);
    const names = (await run('state', '--data-dir', dir, '--at', 'HEAD', '--kind', 'events', '-n', NS, '-o', 'json')).out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).metadata.name);
    expect(names).toEqual(['e0', 'e1', 'e3', 'e4', ...written.map((_, i) => `branch-${i}`)].sort());
    const again = await startServer({ dataDir: dir });
    try {
      expect(Number((await call(again.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion)).toBe(at.middle + count);
      expect(await createEvent(again.url, 'next', NS)).toBe(at.middle + count + 1);
    } finally {
      await again.close();
    }
  });

  it('a fork of that fork, at a version its own writes took, answers as it does and writes over what its tables hold past there', async () => {
    const parent = forkOf('middle');
    const n = at.middle + 1;
    const dir = forkOf('of-fork');
    const r = await run('fork', '--source-data-dir', parent, '--at', String(n), '--data-dir', dir);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(await tailOf(dir, n)).toEqual({ last: n, rowsPast: [] });
    const [a, b] = [await startServer({ dataDir: parent }), await startServer({ dataDir: dir })];
    try {
      for (let v = 1; v <= n; v++) for (const path of LISTS) expect([v, path, await listAt(b.url, path, v)]).toEqual([v, path, await listAt(a.url, path, v)]);
      // Past n its tables hold the parent's writes and, past those, the source's: its own replace them.
      for (let i = 0; i < at.head - n + 2; i++) expect(await labelEvent(b.url, 'e4', { step: `grandchild-${i}` }, NS)).toBe(n + 1 + i);
    } finally {
      await a.close();
      await b.close();
    }
    const versions = (await run('history', 'events/e1', '-n', NS, '--data-dir', dir, '-o', 'json-patch')).out.split('\n').filter(Boolean);
    expect(versions.map((l) => Number(JSON.parse(l).resourceVersion)).every((v) => v <= at.middle)).toBe(true);
    const e4 = (await run('history', 'events/e4', '-n', NS, '--data-dir', dir, '-o', 'json-patch')).out.split('\n').filter(Boolean);
    expect(e4.map((l) => JSON.parse(l).type)).toEqual(['ADDED', ...Array.from({ length: at.head - n + 2 }, () => 'MODIFIED')]);
  });
});
