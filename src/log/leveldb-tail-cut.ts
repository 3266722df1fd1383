import { Level } from 'level';
import { decodeEntry, HORIZON_KEY, isPackedMap, readSeq, SEQ_BYTES, seqKey } from './codec.js';
import { INDEX_RANGE, indexRow } from './version-index.js';

/*
 * The tail of a LevelDB log folder cut after a version, in place: how a fork that shares a source's
 * table files (linked, never copied: LevelDB never changes one once written) becomes a log that ends
 * at N. The entries past N are not deleted: a run of a million deletes would be a million tombstones
 * that every read from that end of the log (the open's seek to the last entry) steps over until a
 * compaction rewrites the source's tables. The log's end is written under END_KEY instead, which
 * LevelDbLog reads as its last entry (and moves on with each batch it writes), so the entries past it
 * are never read, and the fork's own writes replace them one by one. Their version index rows
 * (version-index.ts) are deleted: a row names its key and seq, and a stale row would name a seq the
 * fork's next writes give another key.
 *
 * Its cost is the index rows' deletes and at most one pass over the rows' keys: an entry's row is
 * named by its object key, which only the entry's record holds. A short tail is read for its keys; a
 * long one costs less as a pass over the rows (a key and a seq each) than as a read of its records.
 */

/** Meta key (under 0xff, as codec.ts's): the seq of the log's last entry, in a log whose tables hold entries past it. */
export const END_KEY = Buffer.concat([Buffer.from([0xff]), Buffer.from('end', 'latin1')]);

type Db = Level<Buffer, Buffer>;

const BATCH = 10_000;
/** The tail's records are read for their keys while the tail is at most this share of the log. */
const READ_TAIL_SHARE = 1 / 8;
/** The cut's tombstones are held in memory (not flushed to a table every few MB) until the one flush at its end. */
const WRITE_BUFFER_BYTES = 128 << 20;
const READ_AHEAD_BYTES = 1 << 20;

export interface TailCut {
  /** The first stored entry's seq (0: none) and the last one before the cut. */
  first: number;
  last: number;
  /** The horizon: entries below it are the state a compaction kept. */
  horizon: number;
  /** Entries cut off (left in the tables, past the end). */
  cut: number;
}

/** A stored put whose value is sealed by encryption at rest (not an object's msgpack): its seq and key. */
export interface SealedEntry {
  seq: number;
  key: string;
}

/**
 * Ends the closed log folder at path at `at`: its end key, and no index row of an entry past it.
 * Refuses (changing nothing) when `at` is below what the log holds from its horizon on.
 */
export async function cutTailAfter(path: string, at: number): Promise<TailCut & { sealed: SealedEntry | undefined }> {
  const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize: WRITE_BUFFER_BYTES });
  await db.open();
  try {
    const [firstKey] = await db.keys({ lt: Buffer.from([0xff]), limit: 1 }).all();
    // A fork of a fork: its end is its own last entry.
    const end = await db.get(END_KEY);
    const [lastKey] = end ? [end] : await db.keys({ lt: Buffer.from([0xff]), reverse: true, limit: 1 }).all();
    const horizonBytes = await db.get(HORIZON_KEY);
    const first = firstKey ? readSeq(firstKey) : 0;
    const last = lastKey ? readSeq(lastKey) : 0;
    const horizon = horizonBytes ? readSeq(horizonBytes) : 0;
    if (at < Math.max(first, horizon) - 1) throw new Error(`the log at ${path} holds versions from ${Math.max(first, horizon) - 1} on, not ${at}`);
    let cut = 0;
    if (last > at) {
      const writes = new Writes(db);
      if ((last - at) / Math.max(1, last - first + 1) <= READ_TAIL_SHARE) await rowsOfTail(db, at, last, writes);
      else await rowsAbove(db, at, writes);
      await writes.end(END_KEY, seqKey(at));
      cut = last - at;
      // The rows' tombstones into a table now (any compactRange flushes the memtable first): not left
      // in the write-ahead log, which every reader's snapshot of the fork would copy and fold again.
      await (db as unknown as { compactRange(start: Buffer, end: Buffer): Promise<void> }).compactRange(seqKey(0), seqKey(0));
    }
    return { first, last, horizon, cut, sealed: await sealedSample(db) };
  } finally {
    await db.close();
  }
}

/** The rows of entries at+1..last, from their records' keys. */
async function rowsOfTail(db: Db, at: number, last: number, writes: Writes): Promise<void> {
  const it = db.iterator({ gte: seqKey(at + 1), lte: seqKey(last), highWaterMarkBytes: READ_AHEAD_BYTES });
  try {
    for (let page = await it.nextv(1000); page.length > 0; page = await it.nextv(1000)) {
      for (const [k, v] of page) {
        const seq = readSeq(k);
        writes.del(indexRow(decodeEntry(seq, v).key, seq));
      }
    }
  } finally {
    await it.close();
  }
}

/** Every index row of a seq above `at`, found in one pass over the rows' keys. */
async function rowsAbove(db: Db, at: number, writes: Writes): Promise<void> {
  const it = db.keys({ ...INDEX_RANGE, highWaterMarkBytes: READ_AHEAD_BYTES });
  try {
    for (let page = await it.nextv(1000); page.length > 0; page = await it.nextv(1000)) {
      for (const row of page) if (readSeq(row, row.length - SEQ_BYTES) > at) writes.del(row);
    }
  } finally {
    await it.close();
  }
}

/**
 * A put sealed by encryption at rest, if one is found among each collection's first and last index
 * rows: a log written with encryption at rest seals every value of a resource it encrypts, so one
 * of them in each collection tells whether it was. (A configuration changed between the first and the
 * last write of a collection can hide one; the encrypted log opened later still refuses it.)
 */
async function sealedSample(db: Db): Promise<SealedEntry | undefined> {
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

/** Deletes in batches of BATCH, unsynced, each written after the one before; the last one (with the end) synced. */
class Writes {
  private chain: ReturnType<Db['batch']>;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db) {
    this.chain = db.batch();
  }

  del(key: Buffer): void {
    this.chain.del(key);
    if (this.chain.length >= BATCH) this.push(false);
  }

  private push(sync: boolean): void {
    const chain = this.chain;
    this.chain = this.db.batch();
    const before = this.writing;
    this.writing = (async () => {
      await before;
      await chain.write({ sync });
    })();
    // Seen by end(), which awaits the last: a failure passes down the chain to it.
    this.writing.catch(() => undefined);
  }

  /** Writes what is left with key = value, synced. */
  async end(key: Buffer, value: Buffer): Promise<void> {
    this.chain.put(key, value);
    this.push(true);
    await this.writing;
  }
}
