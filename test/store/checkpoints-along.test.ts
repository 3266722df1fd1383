/**
 * Checkpoints along the log (issue 40): each save leaves an index-only copy beside the whole newest
 * checkpoint, the newest ALONG_KEPT of them kept. Whatever checkpoint a read or a restart starts
 * from, its answers are the fold of the log: a state at every version on both sides of every
 * checkpoint, a restart with the newest checkpoint gone, and after compaction (a checkpoint older
 * than the horizon is not used).
 */
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALONG_KEPT, alongFile, checkpointsBeside, nearestCheckpoint } from '../../src/log/checkpoint-file.js';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import type { LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/api/types.js';
import { Store } from '../../src/store/store.js';
import type { StoredObject } from '../../src/store/stored-object.js';
import { listObjects } from '../../src/store/list.js';
import { decodeCheckpoint } from '../../src/store/checkpoint-format.js';
import { LogObjects, type ReadEntries } from '../../src/store/checkpoint-objects.js';
import { entriesAt } from '../../src/log/entries-at.js';
import { encryptAtRest } from '../../src/log/encryption/index.js';
import { openCheckpointState, pickCheckpoint } from '../../src/timetravel/sources/checkpoint-state.js';
import { snapshotLogFolder } from '../../src/timetravel/sources/log-snapshot.js';
import { setWritable } from '../helpers/folder-contents.js';
import { tempDir } from '../helpers/temp.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const COLLECTIONS = ['g/x', 'g/y'];

async function open(path: string, checkpointEvery = 1_000_000) {
  const log = new LevelDbLog({ path });
  await log.open();
  const store = new Store({ log, checkpointEvery });
  await store.start();
  const close = async () => {
    await store.close();
    await log.close();
  };
  cleanup.push(close);
  return { log, store, close };
}

/** A small deterministic generator: the same workload every run, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const obj = (name: string, v: number, pad = 0): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, labels: { v: String(v) } }, data: { pad: 'p'.repeat(pad) } });

/** Objects as the fold lines them: key, version and JSON, sorted. */
const lines = (objects: Iterable<StoredObject>): string[] => Array.from(objects, (o) => `${o.key} ${o.seq} ${JSON.stringify(o.obj)}`).sort();

/** n objects of ~1.5 kB in g/x (a part ends at 1 MiB of objects: 2000 make three parts); their names. */
async function putMany(store: Store, n: number): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `o${String(i).padStart(4, '0')}`);
  await Promise.all(names.map((name, i) => store.put(`g/x/ns/${name}`, obj(name, i, 1500), 'absent')));
  return names;
}

/** n creates, updates and deletes over a few keys of two collections. */
async function writeSome(store: Store, n: number, rnd: () => number, live: Set<string>): Promise<void> {
  for (let i = 0; i < n; i++) {
    const key = `${COLLECTIONS[Math.floor(rnd() * 2)]}/ns/k${Math.floor(rnd() * 12)}`;
    const name = key.slice(key.lastIndexOf('/') + 1);
    if (!live.has(key)) {
      await store.put(key, obj(name, i), 'absent');
      live.add(key);
    } else if (rnd() < 0.2) {
      await store.update(key, (cur) => ({ kind: 'delete', obj: cur!.obj }));
      live.delete(key);
    } else await store.update(key, () => ({ kind: 'put', obj: obj(name, i) }));
  }
}

/** The state at every version 0..last by folding the whole log: key → [seq, JSON], in key order. */
async function foldEvery(log: LevelDbLog): Promise<string[][]> {
  const at = new Map<string, LogEntry>();
  const out: string[][] = [[]];
  for await (const page of log.read(1, log.lastSeq)) {
    for (const e of page) {
      if (e.type === 'delete') at.delete(e.key);
      else at.set(e.key, e);
      out.push([...at.values()].map((x) => `${x.key} ${x.seq} ${JSON.stringify(x.value)}`).sort());
    }
  }
  return out;
}

/** The state at rv alone by folding the whole log. */
async function foldAt(log: LevelDbLog, rv: number): Promise<string[]> {
  const at = new Map<string, LogEntry>();
  for await (const page of log.read(1, rv)) {
    for (const e of page) {
      if (e.type === 'delete') at.delete(e.key);
      else at.set(e.key, e);
    }
  }
  return [...at.values()].map((x) => `${x.key} ${x.seq} ${JSON.stringify(x.value)}`).sort();
}

/** The state at rv as the checkpoints beside the log answer it (checkpoint-state.ts). */
async function fromCheckpoints(path: string, log: LevelDbLog, rv: number): Promise<string[]> {
  const pages = await openCheckpointState(checkpointFile(path), log)!.pages(rv, COLLECTIONS, '');
  const out: string[] = [];
  for await (const page of pages!) for (const s of page) out.push(`${s.key} ${s.seq} ${JSON.stringify(s.obj)}`);
  return out;
}

describe('checkpoints along the log', () => {
  it('each save leaves an index-only copy beside the whole one, the newest ALONG_KEPT kept', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const { store, log, close } = await open(path);
    const rnd = lcg(7);
    const live = new Set<string>();
    const seqs: number[] = [];
    for (let i = 0; i < ALONG_KEPT + 4; i++) {
      await writeSome(store, 10, rnd, live);
      await store.checkpoint();
      seqs.push(log.lastSeq);
    }
    await close();
    cleanup.pop();
    const found = checkpointsBeside(checkpointFile(path));
    expect(found[0]).toEqual({ seq: seqs[seqs.length - 1], file: checkpointFile(path), indexOnly: false });
    const along = found.filter((c) => c.indexOnly);
    expect(along.map((c) => c.seq)).toEqual(seqs.slice(-ALONG_KEPT).reverse());
    for (const c of along) expect(c.file).toBe(alongFile(checkpointFile(path), c.seq));
    // Nothing half-written is left, nor more files than kept.
    expect(readdirSync(path).filter((n) => n.startsWith('orchd-checkpoint'))).toHaveLength(ALONG_KEPT + 1);
  });

  it('the store saves one every K entries: a copy along the log about every K', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const { store, log, close } = await open(path, 25);
    await writeSome(store, 200, lcg(3), new Set());
    const head = log.lastSeq;
    await close();
    cleanup.pop();
    const along = checkpointsBeside(checkpointFile(path))
      .filter((c) => c.indexOnly)
      .map((c) => c.seq);
    // A save runs while writes go on, so each lands at K or a little past it; one more as the store closes.
    expect(along.length).toBeGreaterThanOrEqual(Math.floor(head / 50));
    expect(along[0]).toBe(head);
    expect(new Set(along).size).toBe(along.length);
  });

  it('state at every version, on both sides of every checkpoint, is the fold of the log: from the whole one, and from the index copies alone', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const { store, log } = await open(path);
    const rnd = lcg(11);
    const live = new Set<string>();
    for (let i = 0; i < 6; i++) {
      await writeSome(store, 23, rnd, live);
      await store.checkpoint();
    }
    await writeSome(store, 17, rnd, live);
    const fold = await foldEvery(log);
    const beside = checkpointFile(path);
    for (let rv = 0; rv <= log.lastSeq; rv++) expect(await fromCheckpoints(path, log, rv), `at ${rv}`).toEqual(fold[rv]);
    // Without the whole one: each version from the nearest index copy at or before it, the log between folded.
    rmSync(beside);
    const along = checkpointsBeside(beside);
    expect(along.every((c) => c.indexOnly)).toBe(true);
    for (let rv = 0; rv <= log.lastSeq; rv++) {
      const chosen = pickCheckpoint(along, rv);
      const nearest = nearestCheckpoint(beside, rv);
      expect(chosen.seq).toBe(nearest?.seq ?? along[along.length - 1].seq);
      expect(await fromCheckpoints(path, log, rv), `at ${rv} from the copy at ${chosen.seq}`).toEqual(fold[rv]);
    }
  });

  it('a restart with the newest checkpoint deleted starts from an older one, reads its objects from the log, and holds what the fold holds', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const first = await open(path);
    const names = await putMany(first.store, 2000);
    await first.store.checkpoint();
    const older = first.log.lastSeq;
    for (const n of names.slice(0, 300)) await first.store.update(`g/x/ns/${n}`, () => ({ kind: 'put', obj: obj(n, -1, 1500) }));
    await first.store.update('g/x/ns/o1999', (cur) => ({ kind: 'delete', obj: cur!.obj }));
    await first.store.checkpoint();
    const newest = first.log.lastSeq;
    const fold = await foldAt(first.log, newest);
    await first.close();
    cleanup.pop();

    const beside = checkpointFile(path);
    // The whole newest only: the index copy at the same version serves.
    rmSync(beside);
    const second = await open(path);
    expect(second.store.startedFrom).toEqual({ checkpointSeq: newest, replayed: 0 });
    const state = (s: Store) => lines(s.view.objects());
    expect(state(second.store)).toEqual(fold);
    await second.close();
    cleanup.pop();

    // The newest checkpoint gone, whole and copy (the close above saved none: nothing new).
    rmSync(beside, { force: true });
    rmSync(alongFile(beside, newest));
    expect(checkpointsBeside(beside)[0].seq).toBe(older);
    const third = await open(path);
    expect(third.store.startedFrom).toEqual({ checkpointSeq: older, replayed: newest - older });
    expect(state(third.store)).toEqual(fold);
  });

  it('a start from a copy along the log reads no object before one is used: a part reads its own when first used, the rest come in one pass', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const first = await open(path);
    const names = await putMany(first.store, 2000);
    await first.store.checkpoint();
    const fold = await foldAt(first.log, first.log.lastSeq);
    await first.close();
    cleanup.pop();
    rmSync(checkpointFile(path));

    const log = new LevelDbLog({ path });
    await log.open();
    cleanup.push(() => log.close());
    let reads = 0;
    const objects = new LogObjects((seq) => (reads++, log.entrySync!(seq)));
    const pass: ReadEntries = (seqs, keyOf) => entriesAt(log, seqs, keyOf);
    const view = (await decodeCheckpoint((await log.loadCheckpoint())!, pass, objects))!;
    expect(reads).toBe(0);
    // One key: its part's objects only, read one at a time.
    const one = view.get('g/x/ns/o1000')!;
    expect(fold).toContain(`${one.key} ${one.seq} ${JSON.stringify(one.obj)}`);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThan(names.length);
    const byOne = reads;
    await objects.readUnread(pass, () => false);
    expect(lines(view.objects())).toEqual(fold);
    // Every other part took its objects from the pass.
    expect(reads).toBe(byOne);
    await log.close();
    cleanup.pop();

    // A store closed while its pass runs stops it, and starts again to the same state.
    const second = await open(path);
    await second.close();
    cleanup.pop();
    // An unpaged list at once waits for the pass, rather than read every part by gets.
    const third = await open(path);
    expect(third.store.unread).toBeDefined();
    const listed = await listObjects(third.store, { collection: 'g/x', prefix: '' });
    expect(third.store.unread).toBeUndefined();
    expect(lines(listed.items)).toEqual(fold);
  });

  it("through the encryption wrapper a server's log always has (nothing configured), a start from a copy along the log reads its objects on use", async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const start = async () => {
      const log = encryptAtRest(new LevelDbLog({ path }));
      await log.open();
      const store = new Store({ log, checkpointEvery: 1_000_000 });
      await store.start();
      return { log, store };
    };
    const first = await start();
    await putMany(first.store, 1500);
    await first.store.checkpoint();
    const state = (s: Store) => lines(s.view.objects());
    const before = state(first.store);
    await first.store.close();
    await first.log.close();
    rmSync(checkpointFile(path));
    const second = await start();
    try {
      expect(second.store.startedFrom).toEqual({ checkpointSeq: second.log.lastSeq, replayed: 0 });
      expect(second.log.entrySync).toBeDefined();
      expect(state(second.store)).toEqual(before);
    } finally {
      await second.store.close();
      await second.log.close();
    }
  });

  it('after compaction a checkpoint older than the horizon is not used; those at or past it still answer as the fold', async () => {
    const path = join(tempDir('orchd-along-'), 'log');
    const { store, log, close } = await open(path);
    const rnd = lcg(23);
    const live = new Set<string>();
    for (let i = 0; i < 5; i++) {
      await writeSome(store, 20, rnd, live);
      await store.checkpoint();
    }
    const saved = checkpointsBeside(checkpointFile(path))
      .filter((c) => c.indexOnly)
      .map((c) => c.seq);
    const fold = await foldEvery(log);
    const below = saved[2] + 3;
    await store.compact(below);
    const horizon = log.firstSeq;
    expect(horizon).toBe(below);
    // Compaction saved a fresh whole checkpoint first; without it, only copies at or past horizon - 1 are read.
    rmSync(checkpointFile(path));
    const usable = saved.filter((s) => s >= horizon - 1);
    expect(usable.length).toBeLessThan(saved.length);
    for (let rv = horizon - 1; rv <= log.lastSeq; rv++) expect(await fromCheckpoints(path, log, rv), `at ${rv}`).toEqual(fold[rv]);
    await close();
    cleanup.pop();
    // Every copy at or past the horizon deleted: the restart does not take the older ones, it folds what compaction kept.
    for (const c of checkpointsBeside(checkpointFile(path))) if (c.seq >= horizon - 1) rmSync(c.file);
    expect(checkpointsBeside(checkpointFile(path)).length).toBeGreaterThan(0);
    const again = await open(path);
    expect(again.store.startedFrom.checkpointSeq).toBe(0);
    expect(lines(again.store.view.objects())).toEqual(fold[fold.length - 1]);
  });

  it('a copy of the folder that cannot be written answers the same from its checkpoints, and no byte or time of it changes', async () => {
    const dir = tempDir('orchd-along-');
    const path = join(dir, 'log');
    const { store, log, close } = await open(path);
    const rnd = lcg(31);
    const live = new Set<string>();
    for (let i = 0; i < 4; i++) {
      await writeSome(store, 25, rnd, live);
      await store.checkpoint();
    }
    await writeSome(store, 9, rnd, live);
    const fold = await foldEvery(log);
    await close();
    cleanup.pop();
    // Two copies: as the folder is, and with only the copies along the log.
    const whole = join(dir, 'whole');
    const along = join(dir, 'along');
    cpSync(path, whole, { recursive: true });
    cpSync(path, along, { recursive: true });
    rmSync(checkpointFile(along));
    const listing = (d: string) =>
      readdirSync(d)
        .sort()
        .map(
          (n) =>
            `${n} ${statSync(join(d, n)).mtimeMs} ${createHash('sha256')
              .update(readFileSync(join(d, n)))
              .digest('hex')}`,
        )
        .concat(String(statSync(d).mtimeMs));
    for (const copy of [whole, along]) {
      setWritable(copy, false);
      cleanup.push(async () => void setWritable(copy, true));
      const before = listing(copy);
      // The log read as time travel reads it: from a snapshot; the checkpoints read where they are.
      const snap = join(tempDir('orchd-along-snap-'), 'log');
      await snapshotLogFolder(copy, snap);
      const snapLog = new LevelDbLog({ path: snap });
      await snapLog.open();
      try {
        for (let rv = 0; rv <= snapLog.lastSeq; rv++) {
          const pages = await openCheckpointState(checkpointFile(copy), snapLog)!.pages(rv, COLLECTIONS, '');
          const got: string[] = [];
          for await (const page of pages!) for (const o of page) got.push(`${o.key} ${o.seq} ${JSON.stringify(o.obj)}`);
          expect(got, `${copy} at ${rv}`).toEqual(fold[rv]);
        }
      } finally {
        await snapLog.close();
      }
      expect(listing(copy)).toEqual(before);
    }
  });
});
