import type { Etcd3, IKeyValue } from 'etcd3';
import { LogError, type LogEntry } from '../log.js';
import type { LeanEtcd } from './grpc/client.js';
import type { Layout } from './layout.js';
import { CompactedError, watchPrefix } from './watch-prefix.js';

const PAGE = 1000;
const noop = () => {};

/** etcd's answer to a read at a compacted revision. */
export const isCompactedError = (err: unknown): boolean => err instanceof Error && /required revision has been compacted/.test(err.message);

export interface Where {
  /** The library client: ranges, compaction, the rare calls. */
  client: Etcd3;
  /** The lean client: watches (and the log's transactions). */
  lean: LeanEtcd;
  layout: Layout;
}

/**
 * Entries start..end, in pages of 1000, from one watch of the prefix from start (etcd replays its
 * history to a watch that starts in the past: the way to read many revisions at once). The read ends
 * at the event of end, or at the first event past it: end may be a hole (a revision of another key),
 * and when no event of the prefix is known to come after it, fence() writes one (a meta key, which
 * no reader takes for an entry). Not a progress notification: etcd 3.4 answers a requested one with
 * its newest revision at once, ahead of the history the watch is still replaying (etcd issue 15220).
 * The watch takes in what etcd sends as fast as it comes, so a compaction that waits for `fetched`
 * cannot pull entries out from under a read that started.
 */
export function readEntries(w: Where, start: number, end: number, fence?: () => Promise<unknown>): { pages: AsyncIterable<LogEntry[]>; fetched: Promise<void> } {
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
    watchPrefix(w.lean, w.layout.prefix, w.layout.end, start, {
      onEvents(events) {
        for (const ev of events) {
          const seq = Number(ev.kv.mod_revision);
          if (seq > end) return finish();
          if (w.layout.isObject(ev.kv.key)) got.push(w.layout.eventEntry(ev));
        }
        notify();
        if (got.length > 0 && got[got.length - 1].seq >= end) finish();
      },
      onProgress: noop,
      onEnd: finish,
    }).then((watch) => {
      if (done) return watch.cancel();
      stop = () => watch.cancel();
      fence?.().catch(finish);
    }, finish);
  });
  const pages = (async function* () {
    try {
      for (let at = 0; ;) {
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

/** etcd's newest revision, by a linearizable (quorum) read: no replica can have acknowledged a write past it. */
export async function headRevision(w: Where, deadlineMs: number): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await w.client.kv.range({ key: w.layout.secret, keys_only: true }, { deadline });
      return Number(res.header.revision);
    } catch (err) {
      // A read, safe to send again: the client sets aside a member that went away (kill -9, a
      // partition), so the next try goes to another, within the same deadline.
      if (attempt === HEAD_TRIES || Date.now() >= deadline) throw err;
    }
  }
}

const HEAD_TRIES = 3;

/** Compacts etcd to revision; another replica may have compacted as far or further. */
export async function compactTo(w: Where, revision: number): Promise<void> {
  try {
    await w.client.kv.compact({ revision, physical: true });
  } catch (err) {
    if (!isCompactedError(err)) throw err;
  }
}

/**
 * The entry of seq. With the key it wrote: the key at that revision (a put), or the state it held
 * before when it was deleted then. Without: the first event of the prefix at seq, if there is one.
 */
export async function entryAt(w: Where, seq: number, key: string | undefined, fence: () => Promise<unknown>): Promise<LogEntry | undefined> {
  try {
    if (key === undefined) {
      for await (const page of readEntries(w, seq, seq, fence).pages) return page.find((e) => e.seq === seq);
      return undefined;
    }
    const object = w.layout.object(key);
    const at = (await w.client.kv.range({ key: object, revision: seq })).kvs[0];
    if (at) return Number(at.mod_revision) === seq ? w.layout.entryOf(at) : undefined;
    const before = (await w.client.kv.range({ key: object, revision: seq - 1 })).kvs[0];
    return before && w.layout.eventEntry({ type: 'Delete', kv: { ...before, key: object, mod_revision: String(seq) }, prev_kv: before });
  } catch (err) {
    if (isCompactedError(err) || (err instanceof LogError && err.code === 'COMPACTED')) return undefined;
    throw err;
  }
}

/** The key's newest record, by a quorum read. */
export async function currentOf(w: Where, key: string): Promise<LogEntry | undefined> {
  const kv = (await w.client.kv.range({ key: w.layout.object(key) })).kvs[0];
  return kv && w.layout.entryOf(kv);
}

/** The object keys as of a revision, in key order, a page at a time. */
async function* objectsAt(w: Where, revision: number, keysOnly: boolean): AsyncIterable<IKeyValue[]> {
  for (let from = w.layout.prefix; ;) {
    const res = await w.client.kv.range({ key: from, range_end: w.layout.end, revision, limit: PAGE, keys_only: keysOnly });
    const kvs = res.kvs.filter((kv) => w.layout.isObject(kv.key));
    if (kvs.length > 0) yield kvs;
    if (!res.more || res.kvs.length === 0) return;
    from = Buffer.concat([res.kvs[res.kvs.length - 1].key, Buffer.from([0])]);
  }
}

/** seq → storage key of each key's record at horizon - 1 (what etcd's compaction keeps) that keep() keeps. */
export async function keptAt(w: Where, horizon: number, keep: (seq: number) => boolean): Promise<Map<number, string>> {
  const kept = new Map<number, string>();
  for await (const kvs of objectsAt(w, horizon - 1, true)) {
    for (const kv of kvs) {
      const seq = Number(kv.mod_revision);
      if (seq < horizon && keep(seq)) kept.set(seq, kv.key.toString('utf8', w.layout.prefix.length));
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
  for await (const kvs of objectsAt(w, horizon - 1, false)) {
    for (const kv of kvs) {
      const seq = Number(kv.mod_revision);
      if (seq >= start && seq < horizon && (!kept || kept.has(seq))) out.push(w.layout.entryOf(kv));
    }
  }
  out.sort((a, b) => a.seq - b.seq);
  const pages: LogEntry[][] = [];
  for (let i = 0; i < out.length; i += PAGE) pages.push(out.slice(i, i + PAGE));
  return pages;
}

/** Every key's newest entry at seq, in seq order: a relist. */
export async function stateAt(w: Where, seq: number): Promise<LogEntry[]> {
  return (await keptEntries(w, 1, seq + 1, undefined)).flat();
}

/** etcd's compaction revision (0: none): the oldest revision a read at a revision may name, found by binary search below head. */
export async function compactedTo(w: Where, head: number): Promise<number> {
  const readable = async (rev: number) => {
    try {
      await w.client.kv.range({ key: w.layout.secret, revision: rev, keys_only: true });
      return true;
    } catch (err) {
      if (isCompactedError(err)) return false;
      throw err;
    }
  };
  if (head <= 1 || (await readable(1))) return 0;
  let lo = 1; // not readable
  let hi = head; // readable
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await readable(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
