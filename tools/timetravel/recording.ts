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
import { open, type FileHandle } from 'node:fs/promises';
import { packJson, StoredEntry, unpackJson } from '../../src/log/codec.js';
import type { KubeObject } from '../../src/resources/types.js';
import { kinds } from '../../src/resources/registry.js';
import { splitKey } from '../../src/store/keys.js';
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
 * Writes the recording of from..to of a history, record by record; returns how many entries. write
 * returns a promise only when it must be waited for (a flush): a million entries are two million
 * pieces, and an await of each was a turn of the microtask queue apiece.
 */
export async function writeRecording(history: History, from: number, to: number, write: (b: Buffer) => void | Promise<void>, onEntry?: (rv: number) => void): Promise<number> {
  const header: RecordingHeader = { format: FORMAT, from, to, oldest: history.oldest, head: history.head, timesFromLog: history.timesFromLog, exportedAt: new Date().toISOString() };
  await write(MAGIC);
  await write(frame(header));
  const state = await history.stateAt(from, { kinds });
  await write(frame({ rv: from, objects: state.map((s) => [s.key, s.object]) }));
  let n = 0;
  if (to > from && history.storedEntries) {
    const clock = history.timesFromLog ? undefined : new StampClock();
    const heads = new HeadSlab();
    // Consecutive entries are mostly of one collection: its kind is looked up once per run.
    let collection: string | undefined;
    for await (const page of history.storedEntries(from + 1, to)) {
      for (const e of page) {
        if (collection === undefined || !e.key.startsWith(collection) || e.key.charCodeAt(collection.length) !== 0x2f) {
          if (kindOfKey(e.key) === undefined) continue;
          collection = splitKey(e.key).collection;
        }
        for (const b of entryFrame(e, (clock ? clock.timeOf(e.value) : e.time) ?? null, heads)) {
          const flushed = write(b);
          if (flushed) await flushed;
        }
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

/** How much of a recording one read takes in: a few thousand entries, one page of the replay. */
const CHUNK = 4 << 20;

/** A recording being read: its header and snapshot, then its entries page by page as they are read. */
export interface RecordingStream {
  header: RecordingHeader;
  /** The state at header.from, in key order. */
  snapshot: [string, KubeObject][];
  /**
   * The entries, in pages (one per read of the file), each an entry whose value is still the
   * recorded msgpack bytes (raw; value decodes them on first use). Throws, after the pages before
   * it, at a damaged record or a missing end. Read once; closes the file when done or abandoned.
   */
  pages: AsyncIterable<LogEntry[]>;
  close(): Promise<void>;
}

/**
 * Opens a recording and reads its header and snapshot; the entries are read as they are asked for,
 * so a replay serves the first while the rest are still on disk (a recording of a million entries
 * is 1.6 GB: read whole, it held the replay for minutes before the first event).
 */
export async function openRecording(file: string): Promise<RecordingStream> {
  const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new TimeTravelError(`${file}: cannot read it (${err.code ?? err.message})`);
  });
  try {
    const reader = new FrameReader(file, fh);
    await reader.fill(MAGIC.length);
    if (!reader.startsWith(MAGIC)) throw new TimeTravelError(`${file}: not an orchd recording (it does not start with ORCHLOG)`);
    const headerBytes = await reader.next();
    if (!headerBytes) throw new TimeTravelError(`${file}: truncated after the magic: no header`);
    const header = decodeRecord(file, reader, headerBytes);
    checkHeader(file, header);
    const snapshotBytes = await reader.next();
    const snapshot = snapshotBytes && (decodeRecord(file, reader, snapshotBytes) as { objects?: [string, KubeObject][] });
    if (!snapshot || !Array.isArray(snapshot.objects)) throw new TimeTravelError(`${file}: no snapshot record`);
    return { header, snapshot: snapshot.objects, pages: entryPages(file, reader), close: () => reader.close() };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

async function* entryPages(file: string, reader: FrameReader): AsyncIterable<LogEntry[]> {
  let entries = 0;
  try {
    for (;;) {
      const page: LogEntry[] = [];
      // The records already read in (a page), then one more read of the file.
      for (let body = await reader.next(); body; body = reader.hasFrame() ? await reader.next() : undefined) {
        const e = entryOf(body) ?? decodeRecord(file, reader, body);
        if (!(e instanceof StoredEntry) && typeof (e as { end?: unknown }).end === 'number') {
          const end = (e as { end: number }).end;
          if (await reader.next()) throw new TimeTravelError(`${file}: ${reader.what} follows the end record: the file is corrupt`);
          if (end !== entries + page.length) throw new TimeTravelError(`${file}: the end record counts ${end} entries, the file holds ${entries + page.length}`);
          if (page.length > 0) yield page;
          return;
        }
        page.push(e instanceof StoredEntry ? e : decodedEntry(file, reader, e));
      }
      if (page.length === 0) throw new TimeTravelError(`${file}: truncated after record ${reader.records - 1}: no end record`);
      entries += page.length;
      yield page;
    }
  } finally {
    await reader.close();
  }
}

/** A record's payload decoded, or an error naming it. */
function decodeRecord(file: string, reader: FrameReader, body: Buffer): unknown {
  try {
    return unpackJson(body);
  } catch {
    throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} does not decode`);
  }
}

/** An entry record that was not written by entryFrame (e.g. from a server's history): checked and re-encoded. */
function decodedEntry(file: string, reader: FrameReader, v: unknown): LogEntry {
  const e = v as Partial<RecordedEntry> | null;
  if (e === null || typeof e !== 'object' || typeof e.rv !== 'number' || (e.type !== 'put' && e.type !== 'delete') || typeof e.key !== 'string' || e.object === undefined) {
    throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} is not an entry`);
  }
  const raw = packJson(e.object);
  return new StoredEntry(e.rv, e.type, e.key, raw, 0, raw.length, typeof e.time === 'number' ? e.time : undefined);
}

/**
 * An entry record laid out as entryFrame writes it, read by hand: the object stays bytes (a view of
 * the record). undefined for any other layout (the end record, an entry msgpackr wrote).
 */
function entryOf(b: Buffer): StoredEntry | undefined {
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

/**
 * The file's records one by one, each checked against its CRC-32, read in chunks of CHUNK bytes. A
 * record's bytes are a view of the chunk it was read into, which a new chunk never overwrites.
 */
class FrameReader {
  private buf = Buffer.alloc(0);
  private at = 0;
  private fileAt = 0;
  private eof = false;
  private closing: Promise<void> | undefined;
  /** Records read so far, and where in the file the last one starts. */
  records = 0;
  recordAt = 0;

  constructor(
    private readonly file: string,
    private readonly fh: FileHandle,
  ) {}

  /** What the last record read is, for errors: record 0 is the header, 1 the snapshot. */
  get what(): string {
    const i = this.records - 1;
    return i === 0 ? 'record 0 (the header)' : i === 1 ? 'record 1 (the snapshot)' : `record ${i} (entry ${i - 1})`;
  }

  startsWith(magic: Buffer): boolean {
    const ok = this.buf.length - this.at >= magic.length && this.buf.subarray(this.at, this.at + magic.length).equals(magic);
    if (ok) this.at += magic.length;
    return ok;
  }

  /** A whole record is already read in. */
  hasFrame(): boolean {
    const left = this.buf.length - this.at;
    return left >= FRAME_HEAD && left >= FRAME_HEAD + this.buf.readUInt32BE(this.at);
  }

  /** The next record's payload, checked; undefined at the end of the file. */
  async next(): Promise<Buffer | undefined> {
    await this.fill(FRAME_HEAD);
    if (this.buf.length === this.at) return undefined;
    this.recordAt = this.fileAt - (this.buf.length - this.at);
    this.records++;
    if (this.buf.length - this.at < FRAME_HEAD) throw new TimeTravelError(`${this.file}: truncated inside ${this.what} at byte ${this.recordAt}`);
    const length = this.buf.readUInt32BE(this.at);
    const sum = this.buf.readUInt32BE(this.at + 4);
    await this.fill(FRAME_HEAD + length);
    const have = this.buf.length - this.at - FRAME_HEAD;
    if (have < length) throw new TimeTravelError(`${this.file}: truncated inside ${this.what} (it needs ${length} bytes at byte ${this.recordAt + FRAME_HEAD}, the file has ${have})`);
    const body = this.buf.subarray(this.at + FRAME_HEAD, this.at + FRAME_HEAD + length);
    if (crc32(body) !== sum) throw new TimeTravelError(`${this.file}: checksum mismatch in ${this.what} at byte ${this.recordAt}: the recording is corrupt`);
    this.at += FRAME_HEAD + length;
    return body;
  }

  /** At least n unread bytes in buf, unless the file ends first: the rest and the next chunk in a new buffer. */
  async fill(n: number): Promise<void> {
    if (this.buf.length - this.at >= n || this.eof) return;
    const rest = this.buf.subarray(this.at);
    const next = Buffer.allocUnsafeSlow(Math.max(CHUNK, n));
    rest.copy(next);
    let filled = rest.length;
    while (filled < next.length) {
      const { bytesRead } = await this.fh.read(next, filled, next.length - filled, this.fileAt);
      if (bytesRead === 0) {
        this.eof = true;
        break;
      }
      filled += bytesRead;
      this.fileAt += bytesRead;
    }
    this.buf = next.subarray(0, filled);
    this.at = 0;
  }

  close(): Promise<void> {
    return (this.closing ??= this.fh.close());
  }
}

/** A recording read whole, its objects decoded (tests, and small recordings). */
export async function readRecording(file: string): Promise<Recording> {
  const rec = await openRecording(file);
  const entries: RecordedEntry[] = [];
  for await (const page of rec.pages) {
    for (const e of page) entries.push({ rv: e.seq, type: e.type, key: e.key, time: e.time ?? null, object: e.value as KubeObject });
  }
  return { header: rec.header, snapshot: rec.snapshot, entries };
}

function checkHeader(file: string, value: unknown): asserts value is RecordingHeader {
  const format = (value as { format?: unknown } | null)?.format;
  if (typeof format !== 'number') throw new TimeTravelError(`${file}: record 0 is not a recording header`);
  if (format > FORMAT) throw new TimeTravelError(`${file}: recording format ${format} is newer than this orchd reads (format ${FORMAT}): replay it with a newer orchd`);
}
