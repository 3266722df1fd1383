import { Packr, Unpackr } from 'msgpackr';
import type { Checkpoint, LogEntry, LogRecord } from './log.js';

/*
 * How the log lays out its bytes, for every backend that stores bytes.
 *
 * Entry key:   8-byte big-endian seq. Byte order (LevelDB's) is then seq order, and since seqs stay
 *              below 2^53 the first byte of an entry key is always 0x00.
 * Entry value: msgpack of {t: 'p' | 'd', k: key, v: value}; the seq lives only in the key.
 * Meta keys:   0xff + a name. 0xff sorts after every entry key, so a scan of entries never sees them.
 *   horizon    8-byte seq: the first seq still readable (written before compaction deletes anything).
 * Checkpoint:  8-byte seq + the checkpoint's bytes (a file of its own for LevelDB: leveldb-log.ts).
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

function writeSeq(b: Buffer, seq: number, offset: number): void {
  b.writeUInt32BE(Math.floor(seq / TWO_32), offset);
  b.writeUInt32BE(seq >>> 0, offset + 4);
}

function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.from([0xff]), Buffer.from(name, 'latin1')]);
}

export const HORIZON_KEY = metaKey('horizon');

export function encodeRecord(r: LogRecord): Buffer {
  // A bad record is a programming mistake; catching it here keeps it out of history.
  if (r.type !== 'put' && r.type !== 'delete') throw new TypeError(`log record type must be put or delete, not ${String(r.type)}`);
  if (typeof r.key !== 'string') throw new TypeError('log record key must be a string');
  return packJson({ t: r.type === 'put' ? 'p' : 'd', k: r.key, v: r.value });
}

export function decodeEntry(seq: number, bytes: Buffer): LogEntry {
  const head = readHeader(bytes);
  if (head) return readEntry(seq, head.type, head.key, bytes.subarray(head.valueAt));
  const s = unpackJson(bytes) as { t?: unknown; k?: unknown; v?: unknown } | null;
  if (s === null || typeof s !== 'object' || (s.t !== 'p' && s.t !== 'd') || typeof s.k !== 'string') {
    throw new Error(`log entry ${seq} is not a log record`);
  }
  return { seq, type: s.t === 'p' ? 'put' : 'delete', key: s.k, value: s.v };
}

/**
 * An entry read from storage whose value is still its msgpack bytes (raw, not enumerable): a replay
 * that only routes entries by key never builds the object, and value decodes it on first use. To
 * everyone else it is a plain entry: value is an own enumerable property that may be reassigned.
 */
function readEntry(seq: number, type: 'put' | 'delete', key: string, raw: Buffer): LogEntry {
  let decoded: unknown;
  let isDecoded = false;
  const e = { seq, type, key } as LogEntry;
  Object.defineProperty(e, 'value', {
    enumerable: true,
    configurable: true,
    get() {
      if (!isDecoded) {
        decoded = unpackJson(raw);
        isDecoded = true;
      }
      return decoded;
    },
    set(v: unknown) {
      decoded = v;
      isDecoded = true;
    },
  });
  Object.defineProperty(e, 'raw', { value: raw, enumerable: false });
  return e;
}

// The bytes encodeRecord writes before the value: a map of 3 ("t", "p" | "d", "k", <str>, "v"), as
// msgpackr writes it (map16, since it does not count an object's keys first) or as fixmap.
const MAP16 = 0xde;
const MAP3 = 0x83;
const FIXSTR1 = 0xa1;
const T = 0x74;
const K = 0x6b;
const V = 0x76;

/**
 * The type and key of a record, and where its value starts, read by hand. undefined when the bytes
 * are laid out otherwise (decodeEntry then decodes the whole record, as it always could).
 */
export function readHeader(b: Buffer): { type: 'put' | 'delete'; key: string; valueAt: number } | undefined {
  let at: number;
  if (b[0] === MAP16 && b[1] === 0 && b[2] === 3) at = 3;
  else if (b[0] === MAP3) at = 1;
  else return undefined;
  if (b.length < at + 9 || b[at] !== FIXSTR1 || b[at + 1] !== T || b[at + 2] !== FIXSTR1 || b[at + 4] !== FIXSTR1 || b[at + 5] !== K) return undefined;
  const t = b[at + 3];
  if (t !== 0x70 && t !== 0x64) return undefined;
  at += 6;
  const m = b[at];
  let length: number;
  if (m >= 0xa0 && m <= 0xbf) {
    length = m & 0x1f;
    at += 1;
  } else if (m === 0xd9 && b.length > at + 1) {
    length = b[at + 1];
    at += 2;
  } else if (m === 0xda && b.length > at + 2) {
    length = b.readUInt16BE(at + 1);
    at += 3;
  } else if (m === 0xdb && b.length > at + 4) {
    length = b.readUInt32BE(at + 1);
    at += 5;
  } else return undefined;
  const end = at + length;
  if (end + 3 > b.length || b[end] !== FIXSTR1 || b[end + 1] !== V) return undefined;
  return { type: t === 0x70 ? 'put' : 'delete', key: b.toString('utf8', at, end), valueAt: end + 2 };
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

/** The checkpoint's bytes as parts to write one after the other (its data is not copied). */
export function encodeCheckpoint(cp: Checkpoint): [Buffer, Uint8Array] {
  const head = Buffer.allocUnsafe(SEQ_BYTES);
  writeSeq(head, cp.seq, 0);
  return [head, cp.data];
}

export function decodeCheckpoint(bytes: Buffer): Checkpoint {
  return { seq: readSeq(bytes), data: bytes.subarray(SEQ_BYTES) };
}
