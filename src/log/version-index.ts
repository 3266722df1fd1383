import { readSeq, SEQ_BYTES, writeSeq } from './codec.js';

/*
 * The version index's layout, for every backend that keeps one (LevelDB, memory): for every object
 * key, the seqs of its stored entries. etcd keeps its own (keyIndex), so the contract's index is
 * optional (log.ts VersionIndex).
 *
 * Row key:   0xff 0x01, the object key's UTF-8, 0x00, the entry's 8-byte big-endian seq. Under 0xff,
 *            so a scan of entries (every key below 0xff) never sees it; 0x01 is no meta name's first
 *            byte (they are letters). A key's rows sort by seq, and keys sort as their bytes do, which
 *            for the ASCII of storage keys is JavaScript's string order: a collection's rows come in
 *            list order. 0x00 cannot be in a storage key (names are DNS labels and paths).
 * Row value: one byte, 'p' (put) or 'd' (delete).
 *
 * Rows are written in the same batch as their entries and deleted in the same batch as theirs, so a
 * crash leaves them matching the stored entries whatever the moment.
 */

const INDEX = Buffer.from([0xff, 0x01]);
const SEPARATOR = 0x00;
const PUT = Buffer.from('p', 'latin1');
const DELETE = Buffer.from('d', 'latin1');

/** The row of entry seq of key. */
export function indexRow(key: string, seq: number): Buffer {
  const keyLength = Buffer.byteLength(key, 'utf8');
  const row = Buffer.allocUnsafe(INDEX.length + keyLength + 1 + SEQ_BYTES);
  row[0] = INDEX[0];
  row[1] = INDEX[1];
  row.write(key, INDEX.length, 'utf8');
  row[INDEX.length + keyLength] = SEPARATOR;
  writeSeq(row, seq, INDEX.length + keyLength + 1);
  return row;
}

export const indexValue = (type: 'put' | 'delete'): Buffer => (type === 'put' ? PUT : DELETE);

/** The rows of exactly one key: from its first seq to its last. */
export function keyRange(key: string): { gte: Buffer; lt: Buffer } {
  const head = Buffer.concat([INDEX, Buffer.from(key, 'utf8')]);
  return { gte: Buffer.concat([head, Buffer.from([SEPARATOR])]), lt: Buffer.concat([head, Buffer.from([SEPARATOR + 1])]) };
}

/** The rows of every key that starts with prefix ('' for every key). 0xff is in no UTF-8. */
export function prefixRange(prefix: string): { gte: Buffer; lt: Buffer } {
  const head = Buffer.concat([INDEX, Buffer.from(prefix, 'utf8')]);
  return { gte: head, lt: Buffer.concat([head, Buffer.from([0xff])]) };
}

/** Every row of the index. */
export const INDEX_RANGE = prefixRange('');

/** A row's key and signed seq (negative: a delete). */
export function readRow(row: Buffer, value: Buffer): { key: string; version: number } {
  const end = row.length - SEQ_BYTES - 1;
  const seq = readSeq(row, end + 1);
  return { key: row.toString('utf8', INDEX.length, end), version: value[0] === DELETE[0] ? -seq : seq };
}

/** A key's version as the index gives it: the entry's seq, negative for a delete. */
export interface KeyVersions {
  key: string;
  /** Ascending by seq; a delete's seq negated. */
  versions: number[];
}

/**
 * The keys that hold an object at seq, from rows in key order (each key's rows by seq): each key's
 * newest version at or before seq, when it is a put. Rows come a page at a time.
 */
export async function* liveFromRows(rows: AsyncIterable<{ key: string; version: number }[]>, seq: number): AsyncIterable<{ key: string; seq: number }[]> {
  let key: string | undefined;
  let newest = 0;
  for await (const page of rows) {
    const out: { key: string; seq: number }[] = [];
    for (const r of page) {
      if (r.key !== key) {
        if (key !== undefined && newest > 0) out.push({ key, seq: newest });
        key = r.key;
        newest = 0;
      }
      if (Math.abs(r.version) <= seq) newest = r.version;
    }
    if (out.length > 0) yield out;
  }
  if (key !== undefined && newest > 0) yield [{ key, seq: newest }];
}
