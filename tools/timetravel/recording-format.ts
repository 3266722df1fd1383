/**
 * A recording (`orchd export`): a self-contained file a colleague can replay. Layout:
 *
 *   "ORCHLOG\n"                      8 bytes: what the file is
 *   records, each:  u32 length, u32 CRC-32 of the payload, payload (msgpack, big-endian numbers)
 *     0: header    {format, from, to, oldest, head, timesFromLog, exportedAt}
 *     1: snapshot  {rv: from, objects: [[key, object], ...]}: the state at `from`
 *     2…: entries  {rv, type: 'put' | 'delete', key, time, object}: every entry from+1..to, in order
 *     last: end    {end: <number of entries>}: a file cut at a record boundary is still found out
 *
 * A reader refuses a format newer than its own, a bad checksum (naming the record), and a file that
 * ends early, each in one line. It reads the file as it goes (openRecording), so a replay serves the
 * first entries while the rest are on disk; a damaged record is then found when it is reached, after
 * the entries before it were served. The checksum stays per record, not per block: CRC-32 costs
 * the same per byte either way, and a per-record one names the damaged record.
 */
import { crc32 } from 'node:zlib';
import { packJson, StoredEntry } from '../../src/log/codec.js';
import type { LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/resources/types.js';

export const MAGIC = Buffer.from('ORCHLOG\n', 'latin1');
export const FORMAT = 1;
export const FRAME_HEAD = 8;

export interface RecordingHeader {
  format: number;
  from: number;
  to: number;
  oldest: number;
  head: number;
  timesFromLog: boolean;
  exportedAt: string;
}

export interface RecordedEntry {
  rv: number;
  type: 'put' | 'delete';
  key: string;
  /** The commit time (ms), or the stamped guess for a log without times; null when nothing tells. */
  time: number | null;
  object: KubeObject;
}

export interface Recording {
  header: RecordingHeader;
  /** The state at header.from, in key order. */
  snapshot: [string, KubeObject][];
  entries: RecordedEntry[];
}

/**
 * An entry's record straight from the log's stored bytes: the msgpack map {rv, type, key, time,
 * object} written by hand around the object's bytes as the log holds them, so exporting an entry
 * neither decodes nor encodes its object. (An entry without stored bytes, one encryption at rest
 * opened, is encoded.) Numbers are float64: a reader gets the same numbers as from packJson's ints.
 */
export function entryFrame(e: LogEntry, time: number | null, heads?: HeadSlab): Buffer[] {
  const object = e.raw ?? packJson(e.value);
  const key = Buffer.from(e.key, 'utf8');
  const type = e.type === 'delete' ? DELETE : PUT;
  const size = FRAME_HEAD + ENTRY_FIELDS_BYTES + type.length + key.length + 5;
  const head = heads ? heads.take(size) : Buffer.allocUnsafe(size);
  let at = FRAME_HEAD;
  head[at++] = 0x85;
  at += RV.copy(head, at);
  head[at++] = 0xcb;
  at = head.writeDoubleBE(e.seq, at);
  at += TYPE.copy(head, at);
  at += type.copy(head, at);
  at += KEY.copy(head, at);
  if (key.length < 0x100) (head[at++] = 0xd9), (head[at++] = key.length);
  else (head[at++] = 0xda), (at = head.writeUInt16BE(key.length, at));
  at += key.copy(head, at);
  at += TIME.copy(head, at);
  if (time === null) head[at++] = 0xc0;
  else (head[at++] = 0xcb), (at = head.writeDoubleBE(time, at));
  at += OBJECT.copy(head, at);
  const fields = head.subarray(FRAME_HEAD, at);
  head.writeUInt32BE(fields.length + object.length, 0);
  head.writeUInt32BE(crc32(object, crc32(fields)), 4);
  return [head.subarray(0, at), object];
}

/**
 * Room for the heads of a page of entry records, in one buffer: a buffer per head was a million
 * small allocations for the garbage collector. A head is written before it is handed out and never
 * after, so a new buffer is taken when one is full and the old one lives as long as its heads.
 */
export class HeadSlab {
  private slab = Buffer.allocUnsafeSlow(0);
  private used = 0;

  take(n: number): Buffer {
    if (this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, 256 * 1024));
      this.used = 0;
    }
    const b = this.slab.subarray(this.used, this.used + n);
    this.used += n;
    return b;
  }
}

const fixstr = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s, 'latin1')]);
const [RV, TYPE, KEY, TIME, OBJECT, PUT, DELETE] = ['rv', 'type', 'key', 'time', 'object', 'put', 'delete'].map(fixstr);
/** The map's mark, its field names and the widest number and string heads. */
const ENTRY_FIELDS_BYTES = 1 + RV.length + 9 + TYPE.length + KEY.length + TIME.length + 9 + OBJECT.length;

export function frame(payload: unknown): Buffer {
  const body = packJson(payload);
  const head = Buffer.allocUnsafe(FRAME_HEAD);
  head.writeUInt32BE(body.length, 0);
  head.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([head, body]);
}

/**
 * An entry record laid out as entryFrame writes it, read by hand: the object stays bytes (a view of
 * the record). undefined for any other layout (the end record, an entry msgpackr wrote).
 */
export function entryOf(b: Buffer): StoredEntry | undefined {
  let at = 0;
  if (b[at++] !== 0x85 || !matches(b, at, RV) || b[(at += RV.length)] !== 0xcb) return undefined;
  const rv = b.readDoubleBE(at + 1);
  at += 9;
  if (!matches(b, at, TYPE)) return undefined;
  at += TYPE.length;
  const type = matches(b, at, PUT) ? 'put' : matches(b, at, DELETE) ? 'delete' : undefined;
  if (!type) return undefined;
  at += type === 'put' ? PUT.length : DELETE.length;
  if (!matches(b, at, KEY)) return undefined;
  at += KEY.length;
  let keyLength: number;
  if (b[at] === 0xd9) (keyLength = b[at + 1]), (at += 2);
  else if (b[at] === 0xda) (keyLength = b.readUInt16BE(at + 1)), (at += 3);
  else return undefined;
  const key = b.toString('utf8', at, (at += keyLength));
  if (!matches(b, at, TIME)) return undefined;
  at += TIME.length;
  let time: number | undefined;
  if (b[at] === 0xc0) at += 1;
  else if (b[at] === 0xcb) (time = b.readDoubleBE(at + 1)), (at += 9);
  else return undefined;
  if (!matches(b, at, OBJECT) || at + OBJECT.length >= b.length) return undefined;
  return new StoredEntry(rv, type, key, b, at + OBJECT.length, b.length, time);
}

function matches(b: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > b.length) return false;
  for (let i = 0; i < what.length; i++) if (b[at + i] !== what[i]) return false;
  return true;
}

