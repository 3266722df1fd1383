import type { Etcd3, IKeyValue } from 'etcd3';
import { decodeEntry } from '../codec.js';
import { LogError, type LogEntry } from '../log.js';
import type { Layout } from './layout.js';
import { CompactedError, watchKey } from './watch-key.js';

const PAGE = 1000;

/** etcd's answer to a read at a compacted revision. */
export const isCompactedError = (err: unknown): boolean => err instanceof Error && /required revision has been compacted/.test(err.message);

/** The log's revision base, for the readers below. */
export interface Where {
  client: Etcd3;
  layout: Layout;
  base: number;
}

/**
 * Entries start..end, in pages of 1000, from one watch of the log key (etcd replays a key's history
 * to a watch that starts in the past: the way to read many revisions at once). The watch starts now
 * and takes in what etcd sends as fast as it comes, so a compaction that waits for `fetched` cannot
 * pull entries out from under a read that started.
 */
export function readEntries(w: Where, start: number, end: number): { pages: AsyncIterable<LogEntry[]>; fetched: Promise<void> } {
  const got: LogEntry[] = [];
  let failure: Error | undefined;
  let done = false;
  let wake: (() => void) | undefined;
  let stop: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const fetched = new Promise<void>((resolve) => {
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      failure = err && (err instanceof CompactedError ? new LogError('COMPACTED', `seq ${start} is compacted`, start) : err);
      stop?.();
      resolve();
      notify();
    };
    watchKey(w.client, w.layout.log, w.base + start, (kvs) => {
      for (const kv of kvs) {
        const seq = Number(kv.mod_revision) - w.base;
        if (seq > end) break;
        got.push(decodeEntry(seq, kv.value));
      }
      notify();
      if (got.length > 0 && got[got.length - 1].seq >= end) finish();
    }, finish).then((watch) => {
      if (done) watch.cancel();
      else stop = () => watch.cancel();
    }, finish);
  });
  const pages = (async function* () {
    try {
      for (let at = 0; ; ) {
        while (!done && got.length - at < PAGE) await new Promise<void>((resolve) => (wake = resolve));
        if (failure) throw failure;
        if (at === got.length) return;
        const page = got.slice(at, at + PAGE);
        at += page.length;
        yield page;
      }
    } finally {
      stop?.();
      done = true;
    }
  })();
  return { pages, fetched };
}

/** The log key's revision (base: none written), by a linearizable (quorum) read: no replica can have acknowledged a write past it. */
export async function headRevision(w: Where, deadlineMs: number): Promise<number> {
  const res = await w.client.kv.range({ key: w.layout.log, keys_only: true }, { deadline: Date.now() + deadlineMs });
  const kv = res.kvs[0];
  return kv ? Number(kv.mod_revision) : w.base;
}

/** Compacts etcd to revision; another replica may have compacted as far or further. */
export async function compactTo(w: Where, revision: number): Promise<void> {
  try {
    await w.client.kv.compact({ revision, physical: true });
  } catch (err) {
    if (!isCompactedError(err)) throw err;
  }
}

/** The record of seq: the log key's value at revision base + seq; undefined when compacted. */
export async function entryAt(w: Where, seq: number): Promise<LogEntry | undefined> {
  try {
    const res = await w.client.kv.range({ key: w.layout.log, revision: w.base + seq });
    const kv = res.kvs[0];
    return kv && Number(kv.mod_revision) === w.base + seq ? decodeEntry(seq, kv.value) : undefined;
  } catch (err) {
    if (isCompactedError(err)) return undefined;
    throw err;
  }
}

/**
 * The object keys as of a revision, in key order, a page at a time: after a compaction to it, each
 * key's record at that revision is what etcd kept (the key's state at the horizon).
 */
export async function* objectsAt(w: Where, revision: number, keysOnly: boolean): AsyncIterable<IKeyValue[]> {
  for (let from = w.layout.objects; ; ) {
    const res = await w.client.kv.range({ key: from, range_end: w.layout.objectsEnd, revision, limit: PAGE, keys_only: keysOnly });
    if (res.kvs.length > 0) yield res.kvs;
    if (!res.more || res.kvs.length === 0) return;
    from = Buffer.concat([res.kvs[res.kvs.length - 1].key, Buffer.from([0])]);
  }
}

/** The kept record of key: its object key's value at revision, if it was last written at seq. */
export async function keptEntry(w: Where, key: string, seq: number, revision: number): Promise<LogEntry | undefined> {
  try {
    const res = await w.client.kv.range({ key: w.layout.object(key), revision });
    const kv = res.kvs[0];
    return kv && Number(kv.mod_revision) === w.base + seq ? decodeEntry(seq, kv.value) : undefined;
  } catch (err) {
    if (isCompactedError(err)) return undefined;
    throw err;
  }
}

/** seq → storage key of each key's record at horizon - 1 (what etcd's compaction keeps) that keep() keeps. */
export async function keptAt(w: Where, horizon: number, keep: (seq: number) => boolean): Promise<Map<number, string>> {
  const kept = new Map<number, string>();
  for await (const kvs of objectsAt(w, w.base + horizon - 1, true)) {
    for (const kv of kvs) {
      const seq = Number(kv.mod_revision) - w.base;
      if (seq < horizon && keep(seq)) kept.set(seq, w.layout.keyOf(kv.key));
    }
  }
  return kept;
}

/**
 * The kept entries from start on below the horizon (all of each key's state there when kept is
 * undefined), in seq order, in pages: one read of every object key at horizon - 1.
 */
export async function keptEntries(w: Where, start: number, horizon: number, kept: Map<number, string> | undefined): Promise<LogEntry[][]> {
  const out: LogEntry[] = [];
  for await (const kvs of objectsAt(w, w.base + horizon - 1, false)) {
    for (const kv of kvs) {
      const seq = Number(kv.mod_revision) - w.base;
      if (seq >= start && seq < horizon && (!kept || kept.has(seq))) out.push(decodeEntry(seq, kv.value));
    }
  }
  out.sort((a, b) => a.seq - b.seq);
  const pages: LogEntry[][] = [];
  for (let i = 0; i < out.length; i += PAGE) pages.push(out.slice(i, i + PAGE));
  return pages;
}

/** Every key's newest entry at seq (as of the log key's revision then), in seq order: a relist. */
export async function stateAt(w: Where, seq: number): Promise<LogEntry[]> {
  return (await keptEntries(w, 1, seq + 1, undefined)).flat();
}
