/**
 * Reads a recording (format.ts, formats 1 and 2) as it goes: its header and the state at
 * its start when opened, its entries page by page as they are asked for, each record checked
 * against its CRC-32.
 */
import { crc32 } from 'node:zlib';
import { open, type FileHandle } from 'node:fs/promises';
import { packJson, StoredEntry, unpackJson } from '../../log/codec.js';
import type { LogEntry } from '../../log/log.js';
import type { KubeObject } from '../../api/types.js';
import { TimeTravelError } from '../core/errors.js';
import { entryOf, FORMAT, FRAME_HEAD, MAGIC, type RecordedEntry, type Recording, type RecordingHeader } from './format.js';
import { ENTRIES, isPage, readPage, STATE } from './pages.js';

/** How much of a recording one read takes in: a few pages of entries. */
const CHUNK = 8 << 20;

/** A recording being read: its header and the state at its start, then its entries page by page as they are read. */
export interface RecordingStream {
  header: RecordingHeader;
  /** The state at header.from, in key order: each object a put at the version that wrote it. */
  state: LogEntry[];
  /**
   * The entries, in pages, each an entry whose value is still the recorded msgpack bytes where the
   * recording has them (raw; value decodes them on first use). Throws, after the pages before it,
   * at a damaged record or a missing end. Read once; closes the file when done or abandoned.
   */
  pages: AsyncIterable<LogEntry[]>;
  /** Where the entries start in the file, and the records before them: readEntries reads them again from there. */
  entriesAt: EntriesAt;
  close(): Promise<void>;
}

/** Where a page of entries starts in a recording: its byte, and the records and entries before it (errors count them). */
export interface EntriesAt {
  format: number;
  offset: number;
  records: number;
  entries: number;
}

/**
 * Opens a recording and reads its header and the state at its start; the entries are read as they
 * are asked for, so a replay serves the first while the rest are still on disk (a recording of a
 * million entries is 1.6 GB: read whole, it held the replay for minutes before the first event).
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
    reader.format = header.format;
    const state: LogEntry[] = [];
    let first: Buffer | undefined;
    let offset = reader.position;
    if (header.format === 1) {
      const snapshotBytes = await reader.next();
      const snapshot = snapshotBytes && (decodeRecord(file, reader, snapshotBytes) as { objects?: [string, KubeObject][] });
      if (!snapshot || !Array.isArray(snapshot.objects)) throw new TimeTravelError(`${file}: no snapshot record`);
      for (const [key, object] of snapshot.objects) state.push({ seq: Number(object.metadata.resourceVersion), type: 'put', key, value: object });
      offset = reader.position;
    } else {
      // The state's pages, up to the first record that is not one (entries, or the end).
      for (;;) {
        first = await reader.next();
        const page = first && isPage(first) ? pageOf(file, reader, first) : undefined;
        if (!page || page.part !== STATE) break;
        for (const e of page.entries) state.push(e);
        offset = reader.position;
      }
    }
    const entriesAt = { format: header.format, offset, records: reader.records - (first ? 1 : 0), entries: 0 };
    return { header, state, pages: entryPages(file, reader, first), entriesAt, close: () => reader.close() };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * The entries of a recording opened before (openRecording), read again from where they start or
 * from a page found before (onPage tells where each page read starts): pages as RecordingStream's.
 */
export async function* readEntries(file: string, at: EntriesAt, onPage?: (first: number, at: EntriesAt) => void): AsyncIterable<LogEntry[]> {
  const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new TimeTravelError(`${file}: cannot read it (${err.code ?? err.message})`);
  });
  const reader = new FrameReader(file, fh, at.offset, at.records);
  reader.format = at.format;
  reader.entries = at.entries;
  yield* entryPages(file, reader, undefined, onPage);
}

/** The entries from the reader's position (first: a record already read there), in pages, up to the end record. */
async function* entryPages(file: string, reader: FrameReader, first?: Buffer, onPage?: (first: number, at: EntriesAt) => void): AsyncIterable<LogEntry[]> {
  try {
    for (;;) {
      const page: LogEntry[] = [];
      let at: EntriesAt | undefined;
      // A page of the file (format 2), or the records of format 1 already read in and one more read.
      for (let body = first ?? (await reader.next()); body; body = reader.format === 1 && reader.hasFrame() ? await reader.next() : undefined) {
        first = undefined;
        at ??= { format: reader.format, offset: reader.recordAt, records: reader.records - 1, entries: reader.entries };
        if (isPage(body)) {
          const p = pageOf(file, reader, body);
          if (p.part !== ENTRIES) throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} holds the state after entries: the file is corrupt`);
          for (const e of p.entries) page.push(e);
          reader.entries += p.entries.length;
          break;
        }
        const e = (reader.format === 1 && entryOf(body)) || decodeRecord(file, reader, body);
        if (!(e instanceof StoredEntry) && typeof (e as { end?: unknown }).end === 'number') {
          const end = (e as { end: number }).end;
          if (await reader.next()) throw new TimeTravelError(`${file}: ${reader.what} follows the end record: the file is corrupt`);
          if (end !== reader.entries + page.length) throw new TimeTravelError(`${file}: the end record counts ${end} entries, the file holds ${reader.entries + page.length}`);
          if (page.length > 0) yield page;
          return;
        }
        page.push(e instanceof StoredEntry ? e : decodedEntry(file, reader, e));
      }
      if (page.length === 0) throw new TimeTravelError(`${file}: truncated after record ${reader.records - 1}: no end record`);
      if (reader.format === 1) reader.entries += page.length;
      onPage?.(page[0].seq, at!);
      yield page;
    }
  } finally {
    await reader.close();
  }
}

/** A page's entries, or an error naming the record. */
function pageOf(file: string, reader: FrameReader, body: Buffer): { part: number; entries: LogEntry[] } {
  const page = readPage(body);
  if (!page) throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} is not a page of log records`);
  return page;
}

/** A record's payload decoded, or an error naming it. */
function decodeRecord(file: string, reader: FrameReader, body: Buffer): unknown {
  try {
    return unpackJson(body);
  } catch {
    throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} does not decode`);
  }
}

/** An entry record of format 1 not laid out as entryOf reads (e.g. from a server's history): checked and re-encoded. */
function decodedEntry(file: string, reader: FrameReader, v: unknown): LogEntry {
  const e = v as Partial<RecordedEntry> | null;
  if (e === null || typeof e !== 'object' || typeof e.rv !== 'number' || (e.type !== 'put' && e.type !== 'delete') || typeof e.key !== 'string' || e.object === undefined) {
    throw new TimeTravelError(`${file}: ${reader.what} at byte ${reader.recordAt} is not an entry`);
  }
  const raw = packJson(e.object);
  const entry = new StoredEntry(e.rv, e.type, e.key, raw, 0, raw.length, typeof e.time === 'number' ? e.time : undefined);
  if (e.writer !== undefined) entry.writer = e.writer;
  return entry;
}

/**
 * The file's records one by one, each checked against its CRC-32, read in chunks of CHUNK bytes. A
 * record's bytes are a view of the chunk it was read into, which a new chunk never overwrites.
 */
class FrameReader {
  private buf = Buffer.alloc(0);
  private at = 0;
  private eof = false;
  private closing: Promise<void> | undefined;
  /** Records read so far, and where in the file the last one starts. */
  records = 0;
  recordAt = 0;
  /** The recording's format, and how many entries were read: what names a record in errors. */
  format = FORMAT;
  entries = 0;

  constructor(
    private readonly file: string,
    private readonly fh: FileHandle,
    /** Where in the file reading starts, and how many records lie before it. */
    private fileAt = 0,
    records = 0,
  ) {
    this.records = records;
  }

  /** Where in the file the next record starts. */
  get position(): number {
    return this.fileAt - (this.buf.length - this.at);
  }

  /** What the last record read is, for errors: record 0 is the header; then (format 1) the snapshot and an entry each, or (2) pages. */
  get what(): string {
    const i = this.records - 1;
    if (i === 0) return 'record 0 (the header)';
    if (this.format === 1) return i === 1 ? 'record 1 (the snapshot)' : `record ${i} (entry ${i - 1})`;
    return `record ${i} (a page of log records${this.entries > 0 ? `, after entry ${this.entries}` : ''})`;
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
  const snapshot = rec.state.map((e): [string, KubeObject] => [e.key, e.value as KubeObject]);
  for await (const page of rec.pages) {
    for (const e of page) {
      const writer = e.writer instanceof Uint8Array ? undefined : e.writer;
      entries.push({ rv: e.seq, type: e.type, key: e.key, time: e.time ?? null, ...(writer ? { writer } : {}), object: e.value as KubeObject });
    }
  }
  return { header: rec.header, snapshot, entries };
}

function checkHeader(file: string, value: unknown): asserts value is RecordingHeader {
  const format = (value as { format?: unknown } | null)?.format;
  if (typeof format !== 'number') throw new TimeTravelError(`${file}: record 0 is not a recording header`);
  if (format > FORMAT) throw new TimeTravelError(`${file}: recording format ${format} is newer than this orchd reads (format ${FORMAT}): replay it with a newer orchd`);
}
