import type { Level } from 'level';
import { decodeEntry, INDEX_KEY, readSeq, seqKey } from './codec.js';
import type { VersionIndex } from './log.js';
import { INDEX_RANGE, indexRow, indexValue, keyRange, liveFromRows, prefixRange, readRow } from './version-index.js';

type Db = Level<Buffer, Buffer>;

/** Layout 1 of version-index.ts: the marker's value, so a later layout can tell an index it must rebuild. */
const LAYOUT = Buffer.from([1]);
const PAGE = 1000;
/** Rows are read a megabyte ahead: a kind's rows are small (a key and a seq) and many. */
const READ_AHEAD_BYTES = 1 << 20;

/** The entries below the meta keys: what a rebuild indexes. */
const ENTRIES = { lt: Buffer.from([0xff]) };

/**
 * Whether the folder's index is whole: its marker is there and the newest stored entry has its row.
 * An orchd older than the index writing to the folder leaves the marker but writes no rows; its
 * appends are caught here. (Its compactions leave rows of deleted entries, which readers skip as
 * entries get() no longer finds: a key's rows only ever gain older stale ones.)
 */
export async function indexIsWhole(db: Db, last: { seq: number; bytes: Buffer } | undefined): Promise<boolean> {
  const marker = await db.get(INDEX_KEY);
  if (!marker?.equals(LAYOUT)) return false;
  if (!last) return true;
  return (await db.get(indexRow(decodeEntry(last.seq, last.bytes).key, last.seq))) !== undefined;
}

/**
 * Rebuilds the index from the stored entries up to last (an old folder, or one an older orchd wrote to), then
 * marks it whole, synced. A crash on the way leaves no marker, so the next open rebuilds again;
 * the rows are cleared first, so no stale one survives.
 */
export async function rebuildIndex(db: Db, last?: number): Promise<void> {
  await db.del(INDEX_KEY, { sync: true });
  await db.clear(INDEX_RANGE);
  // Up to the log's last entry: a fork's (leveldb-tail-cut.ts) tables may hold its source's past it.
  const it = db.iterator({ ...(last === undefined ? ENTRIES : { lte: seqKey(last) }), highWaterMarkBytes: READ_AHEAD_BYTES });
  try {
    for (let page = await it.nextv(PAGE); page.length > 0; page = await it.nextv(PAGE)) {
      const chain = db.batch();
      for (const [k, v] of page) {
        const e = decodeEntry(readSeq(k), v);
        chain.put(indexRow(e.key, e.seq), indexValue(e.type));
      }
      await chain.write();
    }
  } finally {
    await it.close();
  }
  await db.put(INDEX_KEY, LAYOUT, { sync: true });
  // Into tables now, not left in the write-ahead log: every reader's snapshot of the folder copies
  // that file and folds it into a table of its own when it opens.
  await (db as unknown as { compactRange(start: Buffer, end: Buffer): Promise<void> }).compactRange(INDEX_RANGE.gte, INDEX_RANGE.lt);
}

/** Marks the index of a log written whole with its rows (an import) as whole. */
export const markIndexWhole = (db: Db): Promise<void> => db.put(INDEX_KEY, LAYOUT);

/** The index as LevelDB holds it; each read is one iterator, so it sees one moment of the log. */
export class LevelVersionIndex implements VersionIndex {
  /** bound: the log's last seq, where rows past it may stand (a fork's, of its source's entries past its end: leveldb-tail-cut.ts). */
  constructor(
    private readonly db: Db,
    private readonly bound?: () => number,
  ) {}

  async versionsOf(key: string): Promise<number[]> {
    const out: number[] = [];
    for await (const page of this.rows(keyRange(key))) for (const r of page) out.push(r.version);
    return out;
  }

  liveAt(prefix: string, seq: number): AsyncIterable<{ key: string; seq: number }[]> {
    return liveFromRows(this.rows(prefixRange(prefix)), seq);
  }

  private async *rows(range: { gte: Buffer; lt: Buffer }): AsyncIterable<{ key: string; version: number }[]> {
    const it = this.db.iterator({ ...range, highWaterMarkBytes: READ_AHEAD_BYTES });
    try {
      for (let page = await it.nextv(PAGE); page.length > 0; page = await it.nextv(PAGE)) {
        const rows = page.map(([k, v]) => readRow(k, v));
        if (!this.bound) yield rows;
        else {
          const last = this.bound();
          yield rows.filter((r) => Math.abs(r.version) <= last);
        }
      }
    } finally {
      await it.close();
    }
  }
}
