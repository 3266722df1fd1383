import { Packr, Unpackr } from 'msgpackr';
import type { LogEntry, LogRecord, Author } from './log.js';
import { stampVersion } from './stamp.js';

/*
 * How the log lays out its bytes, for every backend that stores bytes.
 *
 * Entry key:   8-byte big-endian seq. Byte order (LevelDB's) is then seq order, and since seqs stay
 *              below 2^53 the first byte of an entry key is always 0x00.
 * Entry value: msgpack of {t: 'p' | 'd', c: commit time, k: key, [w: writer,] v: value}; the seq lives
 *              only in the key. c is the wall-clock time (ms since the epoch, a float64) of the batch
 *              that wrote the entry: encodeRecord leaves room for it and stampTime writes it when the
 *              batch goes to disk. w, when the entry has a writer, is binary: the writer's msgpack, or
 *              its sealed bytes under encryption at rest. Entries written before times were kept are
 *              {t, k, v} and read without one.
 * Meta keys:   0xff + a name. 0xff sorts after every entry key, so a scan of entries never sees them.
 *   horizon    8-byte seq: the first seq still readable (written before compaction deletes anything).
 *   index      the version index is whole (its rows, 0xff 0x01…, are laid out in version-index.ts).
 * Checkpoint:  8-byte seq, a mark, then each part framed by its length (a file of its own for
 *              LevelDB: leveldb-log.ts).
 */

/**
 * Plain JSON in, the same JSON out, for strings that are well-formed UTF-16: a lone surrogate comes
 * back as U+FFFD (one or three, depending on the string's length), so the JSON edge must replace
 * them first, as Go's encoding/json does. Records (msgpackr's shared structures) stay off: they would have
 * to be stored next to the data, and a value must decode on its own, years later.
 */
const packr = new Packr({ useRecords: false });

/**
 * msgpackr renames an own "__proto__" key to "__proto_" when it builds an object (its guard against
 * prototype pollution), but JSON.parse makes such keys and a ConfigMap may hold one. Values whose bytes
 * contain the name are decoded into Maps and rebuilt with defineProperty, which is safe and exact.
 */
/** A JSON value as msgpackr bytes (the log's records, and the store's checkpoints). */
export const packJson = (value: unknown): Buffer => packr.pack(value);

const mapReader = new Unpackr({ useRecords: false, mapsAsObjects: false });
const PROTO = Buffer.from('__proto__', 'latin1');

export const SEQ_BYTES = 8;
const TWO_32 = 2 ** 32;

/** The key of entry seq. */
export function seqKey(seq: number): Buffer {
  const b = Buffer.allocUnsafe(SEQ_BYTES);
  writeSeq(b, seq, 0);
  return b;
}

/** The seq at offset of bytes (an entry key, or the head of a meta value). */
export function readSeq(bytes: Buffer, offset = 0): number {
  return bytes.readUInt32BE(offset) * TWO_32 + bytes.readUInt32BE(offset + 4);
}

export function writeSeq(b: Buffer, seq: number, offset: number): void {
  b.writeUInt32BE(Math.floor(seq / TWO_32), offset);
  b.writeUInt32BE(seq >>> 0, offset + 4);
}

function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.from([0xff]), Buffer.from(name, 'latin1')]);
}

export const HORIZON_KEY = metaKey('horizon');
/** Present once the version index (version-index.ts) holds a row for every stored entry; its value names the layout. */
export const INDEX_KEY = metaKey('index');

/**
 * The record's bytes, written by hand so the commit time sits at a fixed offset (TIME_AT) whatever
 * the key: the batch stamps it there just before the write (stampTime). Until then it reads 0.
 */
export function encodeRecord(r: LogRecord): Buffer {
  // A bad record is a programming mistake; catching it here keeps it out of history.
  if (r.type !== 'put' && r.type !== 'delete') throw new TypeError(`log record type must be put or delete, not ${String(r.type)}`);
  if (typeof r.key !== 'string') throw new TypeError('log record key must be a string');
  return encodeStoredRecord(r.type, r.key, packJson(r.value), writerBytes(r.writer));
}

/** A record's writer as it is stored: its msgpack, or the bytes encryption at rest sealed it into. */
export const writerBytes = (w: Author | Uint8Array | undefined): Uint8Array | undefined => (w === undefined ? undefined : w instanceof Uint8Array ? w : packJson(w));

/**
 * The record's bytes around a value already in msgpack (packJson's bytes, e.g. from a recording):
 * what encodeRecord writes, without encoding the value again.
 */
export function encodeStoredRecord(type: LogRecord['type'], key: string, value: Uint8Array, writer?: Uint8Array): Buffer {
  const bytes = Buffer.allocUnsafe(storedRecordLength(key, value, writer));
  writeStoredRecord(bytes, 0, type, key, value, 0, writer);
  return bytes;
}

const binHead = (n: number): number => (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);

/** How many bytes writeStoredRecord writes. */
export function storedRecordLength(key: string, value: Uint8Array, writer?: Uint8Array): number {
  const keyLength = Buffer.byteLength(key, 'utf8');
  const keyHead = keyLength < 32 ? 1 : keyLength < 0x100 ? 2 : keyLength < 0x10000 ? 3 : 5;
  return TIME_AT + 8 + 2 + keyHead + keyLength + (writer ? 2 + binHead(writer.length) + writer.length : 0) + 2 + value.length;
}

/**
 * Writes the record at b[start...] (room made with storedRecordLength), with its commit time if
 * known and its writer's bytes if any; returns where its value starts.
 */
export function writeStoredRecord(b: Buffer, start: number, type: LogRecord['type'], key: string, value: Uint8Array, time = 0, writer?: Uint8Array): number {
  const keyLength = Buffer.byteLength(key, 'utf8');
  b.set(HEAD, start);
  if (writer) b[start + 2] = 5;
  b[start + 6] = type === 'put' ? 0x70 : 0x64;
  b.writeDoubleBE(time, start + TIME_AT);
  let at = start + TIME_AT + 8;
  b[at++] = FIXSTR1;
  b[at++] = K;
  if (keyLength < 32) b[at++] = 0xa0 | keyLength;
  else if (keyLength < 0x100) {
    b[at++] = 0xd9;
    b[at++] = keyLength;
  } else if (keyLength < 0x10000) {
    b[at] = 0xda;
    at = b.writeUInt16BE(keyLength, at + 1);
  } else {
    b[at] = 0xdb;
    at = b.writeUInt32BE(keyLength, at + 1);
  }
  at += b.write(key, at, 'utf8');
  if (writer) {
    b[at++] = FIXSTR1;
    b[at++] = W;
    const n = writer.length;
    if (n < 0x100) {
      b[at++] = 0xc4;
      b[at++] = n;
    } else if (n < 0x10000) {
      b[at] = 0xc5;
      at = b.writeUInt16BE(n, at + 1);
    } else {
      b[at] = 0xc6;
      at = b.writeUInt32BE(n, at + 1);
    }
    b.set(writer, at);
    at += n;
  }
  b[at++] = FIXSTR1;
  b[at++] = V;
  b.set(value, at);
  return at;
}

/** Writes the commit time (ms since the epoch) into a record encodeRecord made. */
export function stampTime(record: Buffer, ms: number): void {
  record.writeDoubleBE(ms, TIME_AT);
}

/** The entry whose record is bytes[start, end) (a page read into one buffer: see leveldb-log.ts). */
export function decodeEntry(seq: number, bytes: Buffer, start = 0, end = bytes.length): LogEntry {
  const head = readHeader(bytes, start, end);
  if (head) return new StoredEntry(seq, head.type, head.key, bytes, head.valueAt, end, head.time, head.writerAt, head.writerEnd);
  const s = unpackJson(bytes.subarray(start, end)) as { t?: unknown; c?: unknown; k?: unknown; w?: unknown; v?: unknown } | null;
  if (s === null || typeof s !== 'object' || (s.t !== 'p' && s.t !== 'd') || typeof s.k !== 'string') {
    throw new Error(`log entry ${seq} is not a log record`);
  }
  const entry: LogEntry = { seq, type: s.t === 'p' ? 'put' : 'delete', key: s.k, value: stampVersion(s.v, seq) };
  if (typeof s.c === 'number') entry.time = s.c;
  if (s.w instanceof Uint8Array) entry.writer = writerOf(Buffer.from(s.w.buffer, s.w.byteOffset, s.w.byteLength));
  return entry;
}

/** Whether stored bytes are a msgpack map (fixmap, map16, map32): an object's, not a value sealed by encryption at rest (binary). */
export const isPackedMap = (b: Uint8Array): boolean => (b[0] >= 0x80 && b[0] <= 0x8f) || b[0] === 0xde || b[0] === 0xdf;

/** A writer's stored bytes: its msgpack map decoded; sealed bytes (encryption at rest) as they are, for the encrypted log to open. */
function writerOf(b: Buffer): Author | Uint8Array {
  return isPackedMap(b) ? (unpackJson(b) as Author) : b;
}

/**
 * An entry read from storage whose value is still its msgpack bytes: a replay that only routes
 * entries by key never builds the object, and value decodes it on first use (and may be reassigned).
 * A class, not an object with an own accessor per entry: defining accessors on each of a million
 * entries cost more than reading them from LevelDB. value and raw are getters on the prototype, not
 * own enumerable properties: compare entries through seq, type, key and value. The view keeps the
 * value's range of the page buffer (store/view.ts storedOf), not a view object per entry. The
 * decoded value carries the entry's seq as its resourceVersion (stamp.ts); raw is the bytes as
 * stored, with or without it.
 */
export class StoredEntry implements LogEntry {
  #value: unknown = NOT_DECODED;

  constructor(
    readonly seq: number,
    readonly type: 'put' | 'delete',
    readonly key: string,
    /** The value's bytes are bytes[start, end) (a page read into one buffer: leveldb-log.ts). */
    readonly bytes: Buffer,
    readonly start: number,
    readonly end: number,
    /** The commit time; undefined for an entry written before the log kept times. */
    readonly time: number | undefined,
    /** Where its writer's bytes are, when it has one. */
    private readonly writerAt?: number,
    private readonly writerEnd?: number,
  ) {}

  #writer: Author | Uint8Array | undefined | typeof NOT_DECODED = NOT_DECODED;

  /** Its writer as stored (msgpack, or sealed bytes), not decoded: copied as it is into another log. */
  get writerRaw(): Buffer | undefined {
    return this.writerAt === undefined ? undefined : this.bytes.subarray(this.writerAt, this.writerEnd);
  }

  /** Who wrote it (decoded on first use); sealed bytes until encryption at rest opens them. */
  get writer(): Author | Uint8Array | undefined {
    if (this.#writer === NOT_DECODED) this.#writer = this.writerRaw && writerOf(this.writerRaw);
    return this.#writer;
  }

  set writer(w: Author | Uint8Array | undefined) {
    this.#writer = w;
  }

  get raw(): Buffer {
    return this.bytes.subarray(this.start, this.end);
  }

  get value(): unknown {
    if (this.#value === NOT_DECODED) this.#value = stampVersion(unpackJson(this.raw), this.seq);
    return this.#value;
  }

  set value(v: unknown) {
    this.#value = v;
  }
}

const NOT_DECODED = Symbol('not decoded');

// The bytes encodeRecord writes before the value: a map (of 4: "t", "p" | "d", "c", <float64>, "k",
// <str>, "v"), as map16. Older records are a map of 3 without "c", as msgpackr wrote them (map16,
// since it does not count an object's keys first) or as fixmap.
const MAP16 = 0xde;
const MAP3 = 0x83;
const FIXSTR1 = 0xa1;
const FLOAT64 = 0xcb;
const T = 0x74;
const C = 0x63;
const K = 0x6b;
const V = 0x76;
const W = 0x77;
const HEAD = Buffer.from([MAP16, 0, 4, FIXSTR1, T, FIXSTR1, 0, FIXSTR1, C, FLOAT64]);
/** Where encodeRecord puts the commit time (after the map head, "t", its type, "c" and float64's mark). */
const TIME_AT = HEAD.length;

/**
 * The type, time and key of a record, and where its value starts, read by hand. undefined when the
 * bytes are laid out otherwise (decodeEntry then decodes the whole record, as it always could).
 */
function readHeader(b: Buffer, start = 0, stop = b.length): { type: 'put' | 'delete'; time: number | undefined; key: string; valueAt: number; writerAt?: number; writerEnd?: number } | undefined {
  let at: number;
  let fields: number;
  if (b[start] === MAP16 && b[start + 1] === 0 && b[start + 2] >= 3 && b[start + 2] <= 5) {
    fields = b[start + 2];
    at = start + 3;
  } else if (b[start] === MAP3) {
    fields = 3;
    at = start + 1;
  } else return undefined;
  if (stop < at + 9 || b[at] !== FIXSTR1 || b[at + 1] !== T || b[at + 2] !== FIXSTR1) return undefined;
  const t = b[at + 3];
  if (t !== 0x70 && t !== 0x64) return undefined;
  at += 4;
  let time: number | undefined;
  if (fields >= 4) {
    if (stop < at + 12 || b[at] !== FIXSTR1 || b[at + 1] !== C || b[at + 2] !== FLOAT64) return undefined;
    time = b.readDoubleBE(at + 3);
    at += 11;
  }
  if (b[at] !== FIXSTR1 || b[at + 1] !== K) return undefined;
  at += 2;
  const m = b[at];
  let length: number;
  if (m >= 0xa0 && m <= 0xbf) {
    length = m & 0x1f;
    at += 1;
  } else if (m === 0xd9 && stop > at + 1) {
    length = b[at + 1];
    at += 2;
  } else if (m === 0xda && stop > at + 2) {
    length = b.readUInt16BE(at + 1);
    at += 3;
  } else if (m === 0xdb && stop > at + 4) {
    length = b.readUInt32BE(at + 1);
    at += 5;
  } else return undefined;
  const key = b.toString('utf8', at, at + length);
  let end = at + length;
  let writer: { writerAt: number; writerEnd: number } | undefined;
  if (fields === 5) {
    if (end + 4 > stop || b[end] !== FIXSTR1 || b[end + 1] !== W) return undefined;
    const m = b[end + 2];
    const [n, from] =
      m === 0xc4 ? [b[end + 3], end + 4] : m === 0xc5 && end + 5 <= stop ? [b.readUInt16BE(end + 3), end + 5] : m === 0xc6 && end + 7 <= stop ? [b.readUInt32BE(end + 3), end + 7] : [-1, 0];
    if (n < 0) return undefined;
    writer = { writerAt: from, writerEnd: from + n };
    end = from + n;
  }
  if (end + 3 > stop || b[end] !== FIXSTR1 || b[end + 1] !== V) return undefined;
  return { type: t === 0x70 ? 'put' : 'delete', time, key, valueAt: end + 2, ...writer };
}

/** msgpackr bytes back to the JSON value packJson wrote, "__proto__" keys included. */
export function unpackJson(bytes: Buffer): unknown {
  // indexOf is a native scan, a small fraction of the cost of unpacking the same bytes.
  if (bytes.indexOf(PROTO) === -1) return packr.unpack(bytes);
  return fromMaps(mapReader.unpack(bytes));
}

function fromMaps(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(fromMaps);
  if (!(v instanceof Map)) return v;
  const o: Record<string, unknown> = {};
  for (const [k, x] of v) {
    Object.defineProperty(o, String(k), { value: fromMaps(x), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/**
 * The checkpoint file begins with its seq and this mark; each part follows as a 4-byte big-endian
 * length and its bytes. A file without the mark (one an older orchd wrote) is no checkpoint: the
 * store then replays the log, which is always correct.
 */
const CHECKPOINT_MARK = Buffer.from('orchd-cp', 'latin1');
export const CHECKPOINT_HEAD_BYTES = SEQ_BYTES + CHECKPOINT_MARK.length;
export const PART_LENGTH_BYTES = 4;

export function checkpointHead(seq: number): Buffer {
  const head = Buffer.allocUnsafe(CHECKPOINT_HEAD_BYTES);
  writeSeq(head, seq, 0);
  CHECKPOINT_MARK.copy(head, SEQ_BYTES);
  return head;
}

/** The seq a checkpoint file's head names, or undefined when it is not one this code wrote. */
export function readCheckpointHead(head: Buffer): number | undefined {
  if (head.length < CHECKPOINT_HEAD_BYTES || !head.subarray(SEQ_BYTES, CHECKPOINT_HEAD_BYTES).equals(CHECKPOINT_MARK)) return undefined;
  return readSeq(head);
}

/** A part's pieces behind their joint length, ready for one vectored write. */
export function framePart(pieces: readonly Uint8Array[]): Uint8Array[] {
  let length = 0;
  for (const p of pieces) length += p.byteLength;
  const head = Buffer.allocUnsafe(PART_LENGTH_BYTES);
  head.writeUInt32BE(length, 0);
  return [head, ...pieces];
}

/** Parts framed one after another (framePart) back as views of bytes. Throws on a cut frame. */
export function unframeParts(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const end = at + PART_LENGTH_BYTES + (bytes.length - at >= PART_LENGTH_BYTES ? bytes.readUInt32BE(at) : Infinity);
    if (end > bytes.length) throw new Error(`framed checkpoint parts end inside a part (at byte ${at})`);
    parts.push(bytes.subarray(at + PART_LENGTH_BYTES, end));
    at = end;
  }
  return parts;
}
