import type { Level } from 'level';
import { decodeEntry, readSeq, seqKey } from './codec.js';
import type { LogEntry } from './log.js';
import { Slabs } from './slabs.js';

/*
 * Many entries by seq in one ordered pass along LevelDB's entry keys (big-endian seqs: seq order is
 * the order of the tables on disk). A get per entry costs a seek through every level's index and a
 * block decompressed for one value; a range read decompresses each block once and hands its entries
 * over a thousand at a time. Where the wanted seqs lie far apart, reading through the entries between
 * them costs more than a seek, so the pass seeks over a gap longer than SEEK_GAP and reads through a
 * shorter one, handing over (and copying) only the wanted entries: the others are looked at by key.
 */

/**
 * A gap of more entries than this between two wanted seqs is crossed by a seek. Measured at 1M entries
 * of ~1.5 KB (bench/RESULTS.md section 56, loaded): reading through an entry cost 8-10 µs of CPU, a
 * seek and the read after it 55-120 µs (more where it lands in a block not yet read), so reading
 * through a gap won up to about 8 entries and the seek from about 12.
 */
export const SEEK_GAP = 10;
/** The most entries one read hands over (LevelDB's thread fills them while the last page is looked at). */
const PAGE = 1000;
const READ_AHEAD_BYTES = 1 << 20;

type Page = [Buffer, Buffer][];

/**
 * The entries at seqs (ascending, each once) from db, in that order, in pages: the pages joined are
 * one item per seq, undefined where db holds no entry. Every wanted entry's bytes are copied into
 * shared buffers (slabs.ts), as a replay's are. One read is in flight while a page is looked at.
 */
export async function* entriesInOrder(db: Level<Buffer, Buffer>, seqs: ArrayLike<number>): AsyncIterable<(LogEntry | undefined)[]> {
  const n = seqs.length;
  if (n === 0) return;
  const it = db.iterator({ gte: seqKey(seqs[0]), lte: seqKey(seqs[n - 1]), highWaterMarkBytes: READ_AHEAD_BYTES });
  const slabs = new Slabs();
  // The first wanted seq the reads have not passed yet, as the planner sees them: ahead of the pages looked at.
  let planned = 0;
  /** The next read from pos: a seek first when the next wanted seq is more than SEEK_GAP past it. */
  const readFrom = (pos: number): Promise<Page> | undefined => {
    while (planned < n && seqs[planned] < pos) planned++;
    if (planned === n) return undefined;
    let from = pos;
    if (seqs[planned] - pos > SEEK_GAP) {
      from = seqs[planned];
      it.seek(seqKey(from));
    }
    let last = planned;
    while (last + 1 < n && seqs[last + 1] - seqs[last] <= SEEK_GAP && seqs[last + 1] - from < PAGE) last++;
    return it.nextv(seqs[last] - from + 1);
  };
  // The iterator starts at the first wanted seq: no seek.
  let next = readFrom(seqs[0]);
  let i = 0;
  try {
    while (next) {
      const page: Page = await next;
      next = undefined;
      if (page.length === 0) break;
      // Every wanted seq before the page's end that it does not hold is missing: the next read starts after it.
      const end = readSeq(page[page.length - 1][0]) + 1;
      next = readFrom(end);
      const out: (LogEntry | undefined)[] = [];
      i = pick(page, seqs, i, slabs, out);
      while (i < n && seqs[i] < end) {
        out.push(undefined);
        i++;
      }
      if (out.length > 0) yield out;
    }
    if (i < n) yield new Array<undefined>(n - i).fill(undefined);
  } finally {
    await next?.catch(() => undefined);
    await it.close();
  }
}

/** The wanted entries of a page, from seqs[i] on, decoded from copies of their bytes into out (undefined for the ones it skips); returns the next i. */
function pick(page: Page, seqs: ArrayLike<number>, i: number, slabs: Slabs, out: (LogEntry | undefined)[]): number {
  let total = 0;
  const wanted: number[] = [];
  for (let p = 0, w = i; p < page.length && w < seqs.length; p++) {
    const seq = readSeq(page[p][0]);
    while (w < seqs.length && seqs[w] < seq) w++;
    if (seqs[w] !== seq) continue;
    wanted.push(p);
    total += page[p][1].length;
    w++;
  }
  if (wanted.length === 0) return i;
  const { slab, at: start } = slabs.take(total);
  let at = start;
  for (const p of wanted) {
    const [k, v] = page[p];
    const seq = readSeq(k);
    for (; seqs[i] < seq; i++) out.push(undefined);
    v.copy(slab, at);
    out.push(decodeEntry(seq, slab, at, at + v.length));
    at += v.length;
    i++;
  }
  return i;
}
