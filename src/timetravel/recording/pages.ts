/**
 * The pages of a recording of format 2 (format.ts): log records as the log stores them
 * (src/log/codec.ts: {t, c, k, v} msgpack), many to a record of the file, so that exporting a
 * million entries is a thousand writes of bytes copied as they are, and a CRC-32 over each page
 * instead of a frame and a checksum per entry. A page's payload:
 *
 *   0xc1                 PAGE_MARK: a byte msgpack never uses, so a page is told from a msgpack record
 *   u8                   what the page holds: STATE (objects of the state at the recording's start,
 *                        each a put at the version that wrote it) or ENTRIES (the log's entries)
 *   u32 count
 *   records              count records, one after another
 *   count × f64 seq      each record's sequence number (big-endian, as every number of the file)
 *   count × u32 end      where each record ends, counted from the first record's start
 *
 * The table comes after the records so that a page is written in one buffer as its records come,
 * without knowing their number first.
 */
import { decodeEntry, stampTime, storedRecordLength, writeStoredRecord } from '../../log/codec.js';
import type { LogEntry } from '../../log/log.js';
import { FRAME_HEAD } from './format.js';

export const PAGE_MARK = 0xc1;
export const STATE = 1;
export const ENTRIES = 2;
export type PagePart = typeof STATE | typeof ENTRIES;

/** Bytes before a page's first record: the mark, the part and the count. */
const PAGE_HEAD = 6;
const TABLE_ENTRY = 12;
/** A page is closed at this many records or bytes (a page of huge objects has fewer). */
export const PAGE_RECORDS = 1000;
const PAGE_BYTES = 4 << 20;

/**
 * Builds pages, one frame (length, CRC, payload) in one buffer each. A frame is handed out by
 * take() and its buffer comes back with release() once written: two buffers in turn, one filled
 * while the other is on its way to disk (fresh ones each page cost the kernel more, their pages,
 * than the copy).
 */
export class PageWriter {
  private buf: Buffer = Buffer.allocUnsafeSlow(PAGE_BYTES + (1 << 20));
  private readonly free: Buffer[] = [];
  private at = FRAME_HEAD + PAGE_HEAD;
  private readonly seqs: number[] = [];
  private readonly ends: number[] = [];

  constructor(private readonly part: PagePart) {}

  get count(): number {
    return this.seqs.length;
  }

  /** Whether the page is full (take() it before adding more). */
  get full(): boolean {
    return this.seqs.length >= PAGE_RECORDS || this.at >= PAGE_BYTES;
  }

  /** A stored record as it is. */
  addRecord(seq: number, record: Uint8Array): void {
    this.room(record.length);
    this.buf.set(record, this.at);
    this.noted(seq, record.length);
  }

  /** A record made around a value's msgpack bytes (time: its commit time, 0 when none is known; writer: its stored bytes). */
  addValue(seq: number, type: 'put' | 'delete', key: string, value: Uint8Array, time: number | undefined, writer?: Uint8Array): void {
    const n = storedRecordLength(key, value, writer);
    this.room(n);
    writeStoredRecord(this.buf, this.at, type, key, value, 0, writer);
    if (time !== undefined) stampTime(this.buf.subarray(this.at, this.at + n), time);
    this.noted(seq, n);
  }

  /** The page as one frame; undefined when it holds nothing. The writer starts the next page. */
  take(crc32: (b: Uint8Array) => number): Buffer | undefined {
    const n = this.seqs.length;
    if (n === 0) return undefined;
    this.room(n * TABLE_ENTRY);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) at = b.writeDoubleBE(this.seqs[i], at);
    for (let i = 0; i < n; i++) at = b.writeUInt32BE(this.ends[i], at);
    b[FRAME_HEAD] = PAGE_MARK;
    b[FRAME_HEAD + 1] = this.part;
    b.writeUInt32BE(n, FRAME_HEAD + 2);
    const payload = b.subarray(FRAME_HEAD, at);
    b.writeUInt32BE(payload.length, 0);
    b.writeUInt32BE(crc32(payload), 4);
    this.buf = this.free.pop() ?? Buffer.allocUnsafeSlow(b.length);
    this.at = FRAME_HEAD + PAGE_HEAD;
    this.seqs.length = 0;
    this.ends.length = 0;
    return b.subarray(0, at);
  }

  /** A frame's buffer, written: it takes the next page but one. */
  release(frame: Buffer): void {
    // Every frame starts its own buffer (allocUnsafeSlow: not a slice of a pool).
    if (this.free.length < 2) this.free.push(Buffer.from(frame.buffer));
  }

  private noted(seq: number, length: number): void {
    this.at += length;
    this.seqs.push(seq);
    this.ends.push(this.at - FRAME_HEAD - PAGE_HEAD);
  }

  /** Room for n more bytes (a record, or the table) after at. */
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}

/** Whether a record's payload is a page. */
export const isPage = (payload: Buffer): boolean => payload.length > 0 && payload[0] === PAGE_MARK;

/**
 * A page's entries, each a view of the payload (its value decoded on first use), and its part;
 * undefined when the payload is not laid out as a page (counts and offsets that do not add up).
 */
export function readPage(payload: Buffer): { part: number; entries: LogEntry[] } | undefined {
  if (payload.length < PAGE_HEAD || payload[0] !== PAGE_MARK) return undefined;
  const part = payload[1];
  const n = payload.readUInt32BE(2);
  const table = payload.length - n * TABLE_ENTRY;
  if ((part !== STATE && part !== ENTRIES) || table < PAGE_HEAD) return undefined;
  const entries = new Array<LogEntry>(n);
  let start = PAGE_HEAD;
  for (let i = 0; i < n; i++) {
    const seq = payload.readDoubleBE(table + i * 8);
    const end = PAGE_HEAD + payload.readUInt32BE(table + n * 8 + i * 4);
    if (end < start || end > table || !Number.isSafeInteger(seq)) return undefined;
    try {
      entries[i] = decodeEntry(seq, payload, start, end);
    } catch {
      return undefined;
    }
    start = end;
  }
  return start === table ? { part, entries } : undefined;
}
