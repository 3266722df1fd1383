import { Level } from 'level';
import { decodeEntry, HORIZON_KEY, isPackedMap, readSeq, SEQ_BYTES, seqKey } from './codec.js';
import { INDEX_RANGE } from './version-index.js';

/*
 * The tail of a LevelDB log folder cut after a version, in place and in moments whatever its length:
 * how a fork that shares a source's table files (linked, never copied: LevelDB never changes one once
 * written) becomes a log that ends at N. Nothing past N is deleted: a million deletes would be a
 * million tombstones that reads from that end of the log step over until a compaction rewrites the
 * source's tables, and finding the index rows to delete is a pass over all of them (5 s of 8 at a
 * million entries, loaded). Two keys are written instead:
 *
 *   END_KEY    the log's last entry, which LevelDbLog reads instead of seeking it, and moves on with
 *              each batch it writes: the entries past it are never read;
 *   STALE_KEY  up to where the tables hold the source's entries and index rows past the end: the
 *              version index reads no row past the log's last entry, and each batch written over
 *              such a seq deletes the row of the entry it replaces (one get per entry, until the
 *              fork's log has passed it), so no row names a seq that another key now holds.
 */

/** Meta key (under 0xff, as codec.ts's): the seq of the log's last entry, in a log whose tables hold entries past it. */
export const END_KEY = Buffer.concat([Buffer.from([0xff]), Buffer.from('end', 'latin1')]);
/** Meta key: the last seq past END_KEY whose entry and index row are a source's, not the log's. */
export const STALE_KEY = Buffer.concat([Buffer.from([0xff]), Buffer.from('stale', 'latin1')]);

type Db = Level<Buffer, Buffer>;

export interface TailCut {
  /** The first stored entry's seq (0: none) and the last one before the cut. */
  first: number;
  last: number;
  /** The horizon: entries below it are the state a compaction kept. */
  horizon: number;
  /** Entries cut off (left in the tables, past the end, as STALE_KEY says). */
  cut: number;
}

/** A stored put whose value is sealed by encryption at rest (not an object's msgpack): its seq and key. */
export interface SealedEntry {
  seq: number;
  key: string;
}

/**
 * Ends the closed log folder at path at `at` (see the top of this file). Refuses (changing nothing)
 * when `at` is below what the log holds from its horizon on. Tells a sealed entry at or before `at`
 * if one is found (sealedSample).
 */
export async function cutTailAfter(path: string, at: number): Promise<TailCut & { sealed: SealedEntry | undefined }> {
  const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    const [firstKey] = await db.keys({ lt: Buffer.from([0xff]), limit: 1 }).all();
    // A fork of a fork: its end is its own last entry, and its tables may hold stale ones past it.
    const end = await db.get(END_KEY);
    const [lastKey] = end ? [end] : await db.keys({ lt: Buffer.from([0xff]), reverse: true, limit: 1 }).all();
    const staleBytes = await db.get(STALE_KEY);
    const horizonBytes = await db.get(HORIZON_KEY);
    const first = firstKey ? readSeq(firstKey) : 0;
    const last = lastKey ? readSeq(lastKey) : 0;
    const horizon = horizonBytes ? readSeq(horizonBytes) : 0;
    if (at < Math.max(first, horizon) - 1) throw new Error(`the log at ${path} holds versions from ${Math.max(first, horizon) - 1} on, not ${at}`);
    if (last > at) {
      const stale = Math.max(last, staleBytes ? readSeq(staleBytes) : 0);
      await db.batch().put(END_KEY, seqKey(at)).put(STALE_KEY, seqKey(stale)).write({ sync: true });
    }
    return { first, last, horizon, cut: Math.max(0, last - at), sealed: await sealedSample(db, at) };
  } finally {
    await db.close();
  }
}

/**
 * A put sealed by encryption at rest, if one is found among each collection's first and last index
 * rows: a log written with encryption at rest seals every value of a resource it encrypts, so one
 * of them in each collection tells whether it was. (A configuration changed between the first and the
 * last write of a collection can hide one; the encrypted log opened later still refuses it.)
 */
async function sealedSample(db: Db, at: number): Promise<SealedEntry | undefined> {
  const INDEX_HEAD = INDEX_RANGE.gte;
  const it = db.keys({ ...INDEX_RANGE });
  try {
    for (let row = await it.next(); row !== undefined; row = await it.next()) {
      const key = row.toString('utf8', INDEX_HEAD.length, row.length - SEQ_BYTES - 1);
      const second = key.indexOf('/', key.indexOf('/') + 1);
      // Past every key of the collection: its name and '0', the character after '/'.
      const past = Buffer.concat([INDEX_HEAD, Buffer.from(`${key.slice(0, second)}0`, 'utf8')]);
      const [newest] = await db.keys({ gte: row, lt: past, reverse: true, limit: 1 }).all();
      for (const r of newest ? [row, newest] : [row]) {
        const seq = readSeq(r, r.length - SEQ_BYTES);
        // Past the end: the source's, not the fork's.
        if (seq > at) continue;
        const bytes = await db.get(seqKey(seq));
        if (!bytes) continue;
        const e = decodeEntry(seq, bytes);
        if (e.type === 'put' && (e.raw ? !isPackedMap(e.raw) : e.value instanceof Uint8Array)) return { seq, key: e.key };
      }
      it.seek(past);
    }
    return undefined;
  } finally {
    await it.close();
  }
}
