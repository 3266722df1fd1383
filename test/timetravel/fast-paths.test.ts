import { cp, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Level } from 'level';
import { INDEX_KEY } from '../../src/log/codec.js';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import { removeCheckpoints } from '../../src/log/checkpoint-file.js';
import { INDEX_RANGE } from '../../src/log/version-index.js';
import type { KubeObject } from '../../src/api/types.js';
import { Store } from '../../src/store/store.js';
import { objectsAt, versionsOf } from '../../src/store/versions.js';
import { openHistory } from '../../src/timetravel/core/source.js';
import { eventsConfig } from '../encryption/helpers.js';
import { startServer } from '../helpers/server.js';
import { run, startReplayOf } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';
import { mulberry32 as random } from '../helpers/rng.js';

/*
 * Each fast path of the time-travel tools against the general one, on a random log of puts,
 * deletes, compactions and checkpoints written through a real Store on LevelDB: the same bytes out.
 *   state --data-dir (checkpoint parts and the log's tail, transcoded)  vs  the store's key index, decoded and stringified
 *   state --file (a recording)                                          vs  the same
 *   history --data-dir (the checkpoint's key index and the log's tail)  vs  the store's versions of the key
 *   export (the log's records copied as they are)                       vs  export through encryption at rest (each entry re-encoded)
 *   replay (the recording served as it lies, batches framed once)       vs  a live server's catch-up watch from the same version
 */

const SEED = Number(process.env.ORCHD_TEST_SEED ?? 28);
const OPS = 600;
let dir: string;
let dataDir: string;
/** The same folder without its version index, as an orchd older than the index left it: the checkpoint's ways answer. */
let oldDir: string;
/** The same folder without its checkpoint file: a state of many objects is read through the index. */
let noCheckpointDir: string;
let general: Store;
let head = 0;
const written = new Set<string>();

const NOTES = ['plain', 'quote " and backslash \\', 'tab\tnewline\n', 'ünïcødé ✓ 𝄞', 'x'.repeat(300), ''];

function objectOf(key: string, i: number, r: () => number): KubeObject {
  const [, , ns, name] = key.split('/');
  if (key.startsWith('/namespaces/')) return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { step: String(i) } } } as KubeObject;
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, namespace: ns, uid: `uid-${name}-${i}`, labels: { step: String(i), side: r() < 0.5 ? 'a' : 'b' } },
    note: NOTES[Math.floor(r() * NOTES.length)] + i,
    count: Math.floor(r() * 1000),
    ratio: r() < 0.2 ? 0.5 : -3,
    flags: [true, false, null],
  } as unknown as KubeObject;
}

/** Keys enough for a collection to take several checkpoint parts (4096 keys each), in three namespaces. */
const BULK = 9000;

/** OPS random writes through the store: creates, updates, deletes, now and then a checkpoint or a compaction. */
async function writeRandomLog(store: Store, r: () => number): Promise<void> {
  for (let i = 0; i < BULK; i += 500) {
    const puts = Array.from({ length: 500 }, (_, j) => `events.orch.io/events/bulk-${(i + j) % 3}/b${i + j}`);
    await Promise.all(puts.map((key, j) => store.put(key, objectOf(key, i + j, r), 'absent')));
  }
  const keys = [
    ...['ns-a', 'ns-b', 'ns-c'].flatMap((ns) => Array.from({ length: 12 }, (_, i) => `events.orch.io/events/${ns}/e${i}`)),
    ...['ns-a', 'ns-b', 'ns-c', 'ns-d'].map((n) => `/namespaces//${n}`),
  ];
  for (let i = 0; i < OPS; i++) {
    const key = keys[Math.floor(r() * keys.length)];
    const cur = store.get(key);
    const roll = r();
    if (cur && roll < 0.2) await store.remove(key, cur.obj, { seq: cur.seq });
    else await store.put(key, objectOf(key, i, r), cur ? { seq: cur.seq } : 'absent');
    written.add(key);
    if (roll > 0.97) await store.checkpoint();
    else if (roll > 0.955) await store.compact(store.log.firstSeq + Math.floor(r() * (store.appliedSeq - store.log.firstSeq)));
  }
  // The folder as a stopped server leaves it: a checkpoint, then a tail written after it.
  await store.checkpoint();
  for (let i = 0; i < 20; i++) {
    const key = keys[Math.floor(r() * keys.length)];
    const cur = store.get(key);
    await store.put(key, objectOf(key, OPS + i, r), cur ? { seq: cur.seq } : 'absent');
  }
}

beforeAll(async () => {
  dir = tempDir('orchd-fast-paths-');
  dataDir = join(dir, 'data');
  const log = new LevelDbLog({ path: join(dataDir, 'log') });
  await log.open();
  const store = new Store({ log, checkpointEvery: Number.MAX_SAFE_INTEGER });
  await store.start();
  await writeRandomLog(store, random(SEED));
  head = store.appliedSeq;
  await store.close();
  await log.close();
  noCheckpointDir = join(dir, 'no-checkpoint');
  await cp(dataDir, noCheckpointDir, { recursive: true });
  // The whole checkpoint and its copies along the log: none left to read.
  await removeCheckpoints(checkpointFile(join(noCheckpointDir, 'log')));
  oldDir = join(dir, 'old');
  await cp(dataDir, oldDir, { recursive: true });
  const db = new Level<Buffer, Buffer>(join(oldDir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.clear(INDEX_RANGE);
  await db.del(INDEX_KEY);
  await db.close();
  // The general path reads a copy, as a server would open it: the store rebuilt from the checkpoint and the log.
  await cp(join(dataDir, 'log'), join(dir, 'general'), { recursive: true });
  const copy = new LevelDbLog({ path: join(dir, 'general') });
  await copy.open();
  general = new Store({ log: copy, checkpointEvery: Number.MAX_SAFE_INTEGER });
  await general.start();
}, 120_000);

afterAll(async () => {
  await general?.close();
  await general?.log.close();
});

const COLLECTIONS = ['/namespaces', 'events.orch.io/events'];

/** Versions from the horizon to the head, a dozen spread over them, the ends included. */
function versions(): number[] {
  const first = general.oldestVersion;
  const r = random(SEED + 1);
  const picked = new Set([first, head, general.log.firstSeq, head - 5]);
  while (picked.size < 14) picked.add(first + Math.floor(r() * (head - first + 1)));
  return [...picked].filter((v) => v >= Math.max(first, 1) && v <= head).sort((a, b) => a - b);
}

/** The state at rv as the general path gives it: the store's objects at rv, decoded and stringified, a JSON line each. */
async function generalState(rv: number): Promise<string> {
  return (await objectsAt(general, rv, COLLECTIONS)).map((s) => JSON.stringify(s.obj) + '\n').join('');
}

describe(`fast paths against the general one, on a random log (seed ${SEED})`, () => {
  it('the log is what the test meant: deletes, compactions, a checkpoint of several parts and a tail after it', () => {
    expect(general.log.firstSeq).toBeGreaterThan(1);
    expect(general.view.collections.get('events.orch.io/events')!.size).toBeGreaterThan(BULK);
    expect(head).toBeGreaterThan(OPS);
    expect(written.size).toBeGreaterThan(30);
  });

  it.each([
    ['the checkpoint, or the version index for one object', () => dataDir],
    ['the version index (a folder without the checkpoint)', () => noCheckpointDir],
    ['the checkpoint (a folder without the index)', () => oldDir],
  ])('state --data-dir -o json at every version, through %s: the same bytes', async (_way, folder) => {
    for (const v of versions()) {
      const fast = await run('state', '--data-dir', folder(), '--at', String(v), '-o', 'json');
      expect([v, fast.code, fast.err]).toEqual([v, 0, '']);
      expect(fast.out, `state at ${v}`).toBe(await generalState(v));
    }
  });

  it.each([
    ['the checkpoint, or the version index for one object', () => dataDir],
    ['the version index (a folder without the checkpoint)', () => noCheckpointDir],
    ['the checkpoint (a folder without the index)', () => oldDir],
  ])('state --data-dir of one namespace, of one kind, of a label selector and of one object, through %s: the same bytes', async (_way, folder) => {
    const v = versions()[versions().length - 3];
    const all = await generalState(v);
    const lines = (keep: (o: KubeObject) => boolean) =>
      all
        .split('\n')
        .filter((l) => l !== '' && keep(JSON.parse(l)))
        .map((l) => l + '\n')
        .join('');
    for (const [args, keep] of [
      [['-n', 'bulk-1'], (o: KubeObject) => o.metadata.namespace === 'bulk-1'],
      [['-n', 'ns-b'], (o: KubeObject) => o.metadata.namespace === 'ns-b'],
      [['--kind', 'namespaces'], (o: KubeObject) => o.kind === 'Namespace'],
      [['-l', 'side=a'], (o: KubeObject) => o.metadata.labels?.side === 'a'],
      [['events/e3', '-n', 'ns-b'], (o: KubeObject) => o.metadata.namespace === 'ns-b' && o.metadata.name === 'e3'],
      [['namespaces/ns-c'], (o: KubeObject) => o.kind === 'Namespace' && o.metadata.name === 'ns-c'],
    ] as const) {
      const fast = await run('state', '--data-dir', folder(), '--at', String(v), '-o', 'json', ...args);
      expect([args, fast.code, fast.err]).toEqual([args, 0, '']);
      expect(fast.out, args.join(' ')).toBe(lines(keep));
    }
  });

  it.each([
    ['the checkpoint, or the version index for one object', () => dataDir],
    ['the version index (a folder without the checkpoint)', () => noCheckpointDir],
    ['the checkpoint (a folder without the index)', () => oldDir],
  ])('history --data-dir of every key, through %s: the same versions, types and objects', async (_way, folder) => {
    const h = await openHistory({ 'data-dir': folder() });
    try {
      for (const key of written) {
        const fast = (await h.versionsOf(key)).map((c) => `${c.rv} ${c.type} ${JSON.stringify(c.object)}`);
        const slow = (await versionsOf(general, key)).map((v) => `${v.entry.seq} ${v.type} ${JSON.stringify(v.entry.value)}`);
        expect(fast, key).toEqual(slow);
      }
    } finally {
      await h.close();
    }
  });

  it('export copies the records as they are: the same pages as through encryption at rest, and state --file reads them back', async () => {
    const copied = join(dir, 'copied.orchlog');
    const opened = join(dir, 'opened.orchlog');
    const identity = join(dir, 'identity.yaml');
    await writeFile(identity, eventsConfig('      - identity: {}\n'));
    expect((await run('export', '--data-dir', dataDir, '--file', copied)).code).toBe(0);
    expect((await run('export', '--data-dir', dataDir, '--encryption-provider-config', identity, '--file', opened)).code).toBe(0);
    // Past the header (it holds the time of the export): the state's page, the entries' pages, the end.
    const afterHeader = (b: Buffer) => b.subarray(8 + 8 + b.readUInt32BE(8));
    expect(afterHeader(await readFile(copied)).equals(afterHeader(await readFile(opened)))).toBe(true);
    for (const v of versions().filter((x) => x >= general.oldestVersion)) {
      const fromFile = await run('state', '--file', copied, '--at', String(v), '-o', 'json');
      expect([v, fromFile.code, fromFile.err]).toEqual([v, 0, '']);
      expect(fromFile.out, `state --file at ${v}`).toBe(await generalState(v));
    }
  });

  it('replay of the recording sends a watcher the bytes a live server sends a catch-up watch from the same version', async () => {
    const file = join(dir, 'replayed.orchlog');
    expect((await run('export', '--data-dir', dataDir, '--file', file)).code).toBe(0);
    const from = general.oldestVersion;
    const path = `/apis/events.orch.io/v1/events?watch=1&resourceVersion=${from}`;
    const replayed = await readWatch(await startedLines(file, path));
    expect(replayed.length).toBeGreaterThan(100);
    // Each line as the general path writes it: the entry's object decoded, then stringified.
    for (const line of replayed) {
      const { type, object } = JSON.parse(line) as { type: string; object: KubeObject };
      const entry = await general.log.get(Number(object.metadata.resourceVersion));
      expect(line).toBe(JSON.stringify({ type, object: entry!.value }));
    }
    // A live server on a copy of the folder: its own writes at start (namespaces, roles) are no Events.
    await cp(join(dataDir, 'log'), join(dir, 'served', 'log'), { recursive: true });
    const server = await startServer({ dataDir: join(dir, 'served') });
    try {
      expect(await watchLines(server.url, path, replayed.length)).toEqual(replayed);
    } finally {
      await server.close();
    }
  }, 60_000);
});

/** A replay of file at max speed and the lines a watch of path on it reads until the replay is done. */
async function startedLines(file: string, path: string): Promise<{ lines: Promise<string[]>; close: () => Promise<void> }> {
  const r = await startReplayOf({ file }, { speed: 'max', watchers: 1 });
  const lines = watchUntil(
    r.url,
    path,
    r.done.then(() => undefined),
  );
  return { lines, close: () => r.close() };
}

async function readWatch(s: { lines: Promise<string[]>; close: () => Promise<void> }): Promise<string[]> {
  try {
    return await s.lines;
  } finally {
    await s.close();
  }
}

/** The lines a watch of path reads until `done` settles and nothing more comes for a moment. */
function watchUntil(base: string, path: string, done: Promise<void>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = request(new URL(path, base), { agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      void done.then(async () => {
        for (let seen = -1; seen !== text.length;) {
          seen = text.length;
          await sleep(200);
        }
        req.destroy();
        resolve(text.split('\n').filter((l) => l !== ''));
      }, reject);
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
    req.end();
  });
}

/** The first n lines a watch of path on base reads. */
function watchLines(base: string, path: string, n: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = request(new URL(path, base), { agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        const lines = text.split('\n');
        if (lines.length > n) {
          req.destroy();
          resolve(lines.slice(0, n));
        }
      });
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
    req.end();
  });
}
