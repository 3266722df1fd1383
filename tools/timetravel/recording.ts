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
 * ends early, each in one line.
 */
import { crc32 } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { packJson, unpackJson } from '../../src/log/codec.js';
import type { KubeObject } from '../../src/resources/types.js';
import { kinds } from '../../src/resources/registry.js';
import type { LogEntry } from '../../src/log/log.js';
import { kindOfKey, StampClock, TimeTravelError, type History } from './history.js';

export const MAGIC = Buffer.from('ORCHLOG\n', 'latin1');
export const FORMAT = 1;
const FRAME_HEAD = 8;

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
export function entryFrame(e: LogEntry, time: number | null): Buffer[] {
  const object = e.raw ?? packJson(e.value);
  const key = Buffer.from(e.key, 'utf8');
  const type = e.type === 'delete' ? DELETE : PUT;
  const head = Buffer.allocUnsafe(FRAME_HEAD + ENTRY_FIELDS_BYTES + type.length + key.length + 5);
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

/** Writes the recording of from..to of a history, record by record; returns how many entries. */
export async function writeRecording(history: History, from: number, to: number, write: (b: Buffer) => void | Promise<void>, onEntry?: (rv: number) => void): Promise<number> {
  const header: RecordingHeader = { format: FORMAT, from, to, oldest: history.oldest, head: history.head, timesFromLog: history.timesFromLog, exportedAt: new Date().toISOString() };
  await write(MAGIC);
  await write(frame(header));
  const state = await history.stateAt(from, { kinds });
  await write(frame({ rv: from, objects: state.map((s) => [s.key, s.object]) }));
  let n = 0;
  if (to > from && history.storedEntries) {
    const clock = history.timesFromLog ? undefined : new StampClock();
    for await (const page of history.storedEntries(from + 1, to)) {
      for (const e of page) {
        if (kindOfKey(e.key) === undefined) continue;
        for (const b of entryFrame(e, (clock ? clock.timeOf(e.value) : e.time) ?? null)) await write(b);
        n++;
      }
      if (page.length > 0) onEntry?.(page[page.length - 1].seq);
    }
  } else if (to > from) {
    for await (const c of history.changes(from + 1, to, { kinds })) {
      const entry: RecordedEntry = { rv: c.rv, type: c.type === 'DELETED' ? 'delete' : 'put', key: c.key, time: c.time ?? null, object: c.object };
      await write(frame(entry));
      onEntry?.(c.rv);
      n++;
    }
  }
  await write(frame({ end: n }));
  return n;
}

export async function readRecording(file: string): Promise<Recording> {
  const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    throw new TimeTravelError(`${file}: cannot read it (${err.code ?? err.message})`);
  });
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new TimeTravelError(`${file}: not an orchd recording (it does not start with ORCHLOG)`);
  const records: unknown[] = [];
  let end: number | undefined;
  for (let at = MAGIC.length, i = 0; at < bytes.length; i++) {
    const what = i === 0 ? 'record 0 (the header)' : i === 1 ? 'record 1 (the snapshot)' : `record ${i} (entry ${i - 1})`;
    if (end !== undefined) throw new TimeTravelError(`${file}: ${what} follows the end record: the file is corrupt`);
    if (at + FRAME_HEAD > bytes.length) throw new TimeTravelError(`${file}: truncated inside ${what} at byte ${at}`);
    const length = bytes.readUInt32BE(at);
    const sum = bytes.readUInt32BE(at + 4);
    const body = bytes.subarray(at + FRAME_HEAD, at + FRAME_HEAD + length);
    if (body.length < length) throw new TimeTravelError(`${file}: truncated inside ${what} (it needs ${length} bytes at byte ${at + FRAME_HEAD}, the file has ${body.length})`);
    if (crc32(body) !== sum) throw new TimeTravelError(`${file}: checksum mismatch in ${what} at byte ${at}: the recording is corrupt`);
    let value: unknown;
    try {
      value = unpackJson(body);
    } catch {
      throw new TimeTravelError(`${file}: ${what} at byte ${at} does not decode`);
    }
    if (i === 0) checkHeader(file, value);
    if (i > 1 && typeof (value as { end?: unknown }).end === 'number') end = (value as { end: number }).end;
    else records.push(value);
    at += FRAME_HEAD + length;
  }
  if (end === undefined) throw new TimeTravelError(`${file}: truncated after record ${records.length - 1}: no end record`);
  const [header, snapshot, ...entries] = records as [RecordingHeader, { rv: number; objects: [string, KubeObject][] }, ...RecordedEntry[]];
  if (snapshot === undefined) throw new TimeTravelError(`${file}: no snapshot record`);
  if (entries.length !== end) throw new TimeTravelError(`${file}: the end record counts ${end} entries, the file holds ${entries.length}`);
  return { header, snapshot: snapshot.objects, entries };
}

function checkHeader(file: string, value: unknown): asserts value is RecordingHeader {
  const format = (value as { format?: unknown } | null)?.format;
  if (typeof format !== 'number') throw new TimeTravelError(`${file}: record 0 is not a recording header`);
  if (format > FORMAT) throw new TimeTravelError(`${file}: recording format ${format} is newer than this orchd reads (format ${FORMAT}): replay it with a newer orchd`);
}
