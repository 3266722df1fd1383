/**
 * A recording (`orchd export`): a self-contained file a colleague can replay. Layout:
 *
 *   "ORCHLOG\n"                      8 bytes: what the file is
 *   records, each:  u32 length, u32 CRC-32 of the payload, payload (big-endian numbers)
 *     0: header    msgpack {format, from, to, oldest, head, timesFromLog, exportedAt}
 *     pages        the state at `from` (its objects as puts at their own versions, each with the
 *                  writer and commit time of the entry that wrote it where the source still holds
 *                  it: none in a recording exported before, or from a server), then every entry
 *                  from+1..to in order: each page up to a thousand log records as the log stores
 *                  them (pages.ts), each with its writer where the log kept one
 *     last: end    msgpack {end: <number of entries>}: a file cut at a record boundary is still found out
 *
 * Format 1 (read, no longer written) had a record per entry, msgpack {rv, type, key, time, object}
 * (entryOf), and the state as one record {rv, objects: [[key, object], ...]}.
 *
 * A reader refuses a format newer than its own, a bad checksum (naming the record), and a file that
 * ends early, each in one line. It reads the file as it goes (openRecording), so a replay serves the
 * first entries while the rest are on disk; a damaged record is then found when it is reached, after
 * the entries before it were served.
 */
import { crc32 } from 'node:zlib';
import { packJson, StoredEntry } from '../../log/codec.js';
import type { Author } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';

export const MAGIC = Buffer.from('ORCHLOG\n', 'latin1');
export const FORMAT = 2;
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
  /** Who wrote it, where the log kept it. */
  writer?: Author;
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

const fixstr = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s, 'latin1')]);
const [RV, TYPE, KEY, TIME, OBJECT, PUT, DELETE] = ['rv', 'type', 'key', 'time', 'object', 'put', 'delete'].map(fixstr);
/** A msgpack record (the header, the end), framed. */
export function frame(payload: unknown): Buffer {
  const body = packJson(payload);
  const head = Buffer.allocUnsafe(FRAME_HEAD);
  head.writeUInt32BE(body.length, 0);
  head.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([head, body]);
}

/**
 * An entry record of format 1, laid out as its export wrote it, read by hand: the object stays
 * bytes (a view of the record). undefined for any other layout (the end record, an entry msgpackr wrote).
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
  if (b[at] === 0xd9) {
    keyLength = b[at + 1];
    at += 2;
  } else if (b[at] === 0xda) {
    keyLength = b.readUInt16BE(at + 1);
    at += 3;
  } else return undefined;
  const key = b.toString('utf8', at, (at += keyLength));
  if (!matches(b, at, TIME)) return undefined;
  at += TIME.length;
  let time: number | undefined;
  if (b[at] === 0xc0) at += 1;
  else if (b[at] === 0xcb) {
    time = b.readDoubleBE(at + 1);
    at += 9;
  } else return undefined;
  if (!matches(b, at, OBJECT) || at + OBJECT.length >= b.length) return undefined;
  return new StoredEntry(rv, type, key, b, at + OBJECT.length, b.length, time);
}

function matches(b: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > b.length) return false;
  for (let i = 0; i < what.length; i++) if (b[at + i] !== what[i]) return false;
  return true;
}
