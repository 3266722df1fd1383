import { isUtf8 } from 'node:buffer';
import { BYTE, scan, writeEscaped } from './json-string-bytes.js';

/**
 * The JSON text of a stored value straight from its msgpack bytes, without building the object:
 * what JSON.stringify(unpackJson(bytes)) gives, byte for byte, for every value packJson writes from
 * JSON. Strings are already UTF-8 in msgpack and are copied as they are, escaped as JSON.stringify
 * escapes them. At 100k Events, decoding each object into a tree and stringifying it was most of
 * what a first list cost, and the trees stayed on the heap for the garbage collector to walk.
 *
 * undefined when the bytes hold something this does not translate exactly: binary, extensions,
 * float32, 64-bit integers, non-string map keys, strings that are not well-formed UTF-8 (msgpackr
 * substitutes U+FFFD for those, in a way that depends on the string's length). The caller then takes
 * the slow path, which is always right.
 *
 * version: the seq of the entry the bytes were read from, written as metadata.resourceVersion in
 * place of what the bytes hold there, or after metadata's last field when they hold none (as
 * stampVersion does to the object: log/stamp.ts), so the JSON is the stamped object's.
 */
export function msgpackToJson(bytes: Buffer, version?: number): { json: Buffer; apiVersion: string | undefined } | undefined {
  const t = new Transcoder(bytes, room(scratch, 0, bytes.length), 0, version);
  const ok = t.whole(0, bytes.length);
  // A grown buffer is kept for the next object unless one huge object grew it.
  if (t.out.length <= SCRATCH_KEEP) scratch = t.out;
  if (!ok) return undefined;
  // A copy of exactly the right size (small ones share Node's buffer pool): the cached encoding
  // holds no slack, and the scratch buffer is reused.
  return { json: Buffer.from(t.out.subarray(0, t.o)), apiVersion: t.apiVersion };
}

/**
 * Writes the JSON of the msgpack value bytes[start, end) into out at o (a larger copy of out when it
 * has not room: what is before o is kept): the buffer written, where the JSON ends in it and the
 * value's top-level apiVersion; undefined when it cannot be written exactly (msgpackToJson's rules).
 * Many values one after another into one buffer: a batch of watch events is framed once this way.
 * version: as msgpackToJson's.
 */
export function transcodeInto(bytes: Buffer, start: number, end: number, out: Buffer, o: number, version?: number): { out: Buffer; end: number; apiVersion: string | undefined } | undefined {
  const t = new Transcoder(bytes, room(out, o, end - start), o, version);
  return t.whole(start, end) ? { out: t.out, end: t.o, apiVersion: t.apiVersion } : undefined;
}

/**
 * The most JSON a msgpack value of n bytes becomes: each byte of a string at most six (\u00XX),
 * and every other item (one byte at least) at most six too (a fixint "-32" and its comma, false and
 * its comma, a fixstr's quotes, colon and comma), a float64 (nine bytes) at most 25. So room is
 * made once per value and the transcoder writes without checking it.
 */
const most = (n: number): number => 6 * n + 8 + STAMP_ROOM;

/** Room for a stamped `,"resourceVersion":"<seq>"` beyond the value's own (a seq has at most 16 digits). */
const STAMP_ROOM = 40;

/** out, or a larger copy of its first `used` bytes, with room for the JSON of n bytes of msgpack after them. */
function room(out: Buffer, used: number, n: number): Buffer {
  const need = used + most(n);
  if (need <= out.length) return out;
  const grown = Buffer.allocUnsafe(Math.max(out.length * 2, need));
  out.copy(grown, 0, 0, used);
  return grown;
}

const SCRATCH_KEEP = 1 << 20;
let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024);

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
/** The msgpack fixstr of "apiVersion": the one top-level key whose value is noted on the way. */
const API_VERSION = Buffer.from([0xaa, ...Buffer.from('apiVersion', 'latin1')]);
/** The fixstrs of "metadata" (top level) and its "resourceVersion": where a version is stamped. */
const METADATA = Buffer.from([0xa8, ...Buffer.from('metadata', 'latin1')]);
const RESOURCE_VERSION = Buffer.from([0xaf, ...Buffer.from('resourceVersion', 'latin1')]);
const MANAGED_FIELDS = Buffer.from([0xad, ...Buffer.from('managedFields', 'latin1')]);
const RESOURCE_VERSION_KEY = Buffer.from('"resourceVersion":', 'latin1');
/** From this length a string is checked first, then copied natively (a shorter one byte by byte: a native copy costs a view and a call). */
const LONG_STRING = 128;
const NULL = Buffer.from('null', 'latin1');
const TRUE = Buffer.from('true', 'latin1');
const FALSE = Buffer.from('false', 'latin1');
const NEWLINE = 0x0a;

class Transcoder {
  at = 0;
  apiVersion: string | undefined;
  /** The next value is the top-level metadata: if it is a map, its resourceVersion is the stamped one, its managedFields dropped when asked. */
  private metaNext = false;
  private readonly version: Buffer | undefined;

  constructor(
    private readonly b: Buffer,
    /** Has room for the JSON of the value (see most()). */
    public out: Buffer,
    public o: number,
    version?: number,
    /** Leave out metadata.managedFields, as the time-travel commands print objects by default. */
    private readonly dropManagedFields = false,
  ) {
    this.version = version === undefined ? undefined : Buffer.from(`"${version}"`, 'latin1');
  }

  /** Writes the value that is exactly b[start, end); false when it cannot be written exactly. */
  whole(start: number, end: number): boolean {
    this.at = start;
    try {
      return this.value(0) && this.at === end;
    } catch {
      // Truncated bytes read past the end, or nesting deeper than the stack.
      return false;
    }
  }

  /** Writes the value at `at` and moves past it; false when it cannot be written exactly. */
  value(depth: number): boolean {
    const b = this.b;
    const meta = this.metaNext;
    this.metaNext = false;
    const m = b[this.at++];
    if (m < 0x80) return this.number(m);
    if (m >= 0xe0) return this.number(m - 0x100);
    if (m <= 0x8f) return this.map(m & 0x0f, depth, meta);
    if (m <= 0x9f) return this.array(m & 0x0f, depth);
    if (m <= 0xbf) return this.string(m & 0x1f);
    let n: number;
    switch (m) {
      case 0xc0:
        return this.raw(NULL);
      case 0xc2:
        return this.raw(FALSE);
      case 0xc3:
        return this.raw(TRUE);
      case 0xcb:
        n = b.readDoubleBE(this.at);
        this.at += 8;
        return Number.isFinite(n) ? this.number(n) : this.raw(NULL);
      case 0xcc:
        return this.number(b[this.at++]);
      case 0xcd:
        n = b.readUInt16BE(this.at);
        this.at += 2;
        return this.number(n);
      case 0xce:
        n = b.readUInt32BE(this.at);
        this.at += 4;
        return this.number(n);
      case 0xd0:
        return this.number(b.readInt8(this.at++));
      case 0xd1:
        n = b.readInt16BE(this.at);
        this.at += 2;
        return this.number(n);
      case 0xd2:
        n = b.readInt32BE(this.at);
        this.at += 4;
        return this.number(n);
      case 0xd9:
        return this.string(b[this.at++]);
      case 0xda:
        n = b.readUInt16BE(this.at);
        this.at += 2;
        return this.string(n);
      case 0xdb:
        n = b.readUInt32BE(this.at);
        this.at += 4;
        return this.string(n);
      case 0xdc:
        n = b.readUInt16BE(this.at);
        this.at += 2;
        return this.array(n, depth);
      case 0xdd:
        n = b.readUInt32BE(this.at);
        this.at += 4;
        return this.array(n, depth);
      case 0xde:
        n = b.readUInt16BE(this.at);
        this.at += 2;
        return this.map(n, depth, meta);
      case 0xdf:
        n = b.readUInt32BE(this.at);
        this.at += 4;
        return this.map(n, depth, meta);
      default:
        return false;
    }
  }

  /** meta: this is the top-level metadata, whose resourceVersion is the stamped version (and whose managedFields may be dropped). */
  private map(n: number, depth: number, meta: boolean): boolean {
    const b = this.b;
    const stamp = meta && this.version !== undefined;
    const drop = meta && this.dropManagedFields;
    let stamped = false;
    let written = 0;
    this.out[this.o++] = 0x7b;
    for (let i = 0; i < n; i++) {
      const entryO = this.o;
      if (written > 0) this.out[this.o++] = COMMA;
      const keyAt = this.at;
      const m = b[this.at++];
      let len: number;
      if (m >= 0xa0 && m <= 0xbf) len = m & 0x1f;
      else if (m === 0xd9) len = b[this.at++];
      else if (m === 0xda) {
        len = b.readUInt16BE(this.at);
        this.at += 2;
      } else return false;
      if (!this.string(len)) return false;
      this.out[this.o++] = COLON;
      const valueAt = this.at;
      const valueO = this.o;
      if (depth === 0 && (this.version || this.dropManagedFields) && isKey(b, keyAt, METADATA)) this.metaNext = true;
      if (!this.value(depth + 1)) return false;
      // Written, then taken back: its end is known once it is read.
      if (drop && isKey(b, keyAt, MANAGED_FIELDS)) {
        this.o = entryO;
        continue;
      }
      written++;
      if (depth === 0 && m === API_VERSION[0] && isKey(b, keyAt, API_VERSION)) this.apiVersion = this.stringAt(valueAt);
      if (stamp && isKey(b, keyAt, RESOURCE_VERSION)) {
        // What the bytes hold is replaced: written over, its room is enough (STAMP_ROOM).
        this.o = valueO + this.version!.copy(this.out, valueO);
        stamped = true;
      }
    }
    if (stamp && !stamped) {
      if (written > 0) this.out[this.o++] = COMMA;
      this.o += RESOURCE_VERSION_KEY.copy(this.out, this.o);
      this.o += this.version!.copy(this.out, this.o);
    }
    this.out[this.o++] = 0x7d;
    return true;
  }

  private array(n: number, depth: number): boolean {
    this.out[this.o++] = 0x5b;
    for (let i = 0; i < n; i++) {
      if (i > 0) this.out[this.o++] = COMMA;
      if (!this.value(depth + 1)) return false;
    }
    this.out[this.o++] = 0x5d;
    return true;
  }

  /**
   * A string of len bytes at `at`, copied as it is unless a byte needs escaping, and checked while
   * copied: a long one checked four bytes at a time (scan), then copied natively; a short one byte
   * by byte (a native copy costs a view and a call; words read and written through DataViews cost
   * more than bytes at these lengths, measured). Escaping is rare: found, the string is written
   * again from its start.
   */
  private string(len: number): boolean {
    const b = this.b;
    const start = this.at;
    const end = start + len;
    if (end > b.length) return false;
    const out = this.out;
    let o = this.o;
    out[o++] = QUOTE;
    let kinds: number;
    if (len >= LONG_STRING) {
      kinds = scan(b, start, end);
      if (kinds < 2) o += b.copy(out, o, start, end);
    } else {
      kinds = 0;
      for (let i = start; i < end; i++) {
        const c = b[i];
        kinds |= BYTE[c];
        out[o++] = c;
      }
    }
    if (kinds >= 2) o = writeEscaped(b, start, end, out, this.o + 1);
    out[o++] = QUOTE;
    if (kinds !== 0 && !isUtf8(b.subarray(start, end))) return false;
    this.o = o;
    this.at = end;
    return true;
  }

  /** The string whose marker is at `at` (read and checked already), undefined for another type. */
  private stringAt(at: number): string | undefined {
    const m = this.b[at];
    const head = m >= 0xa0 && m <= 0xbf ? 1 : m === 0xd9 ? 2 : m === 0xda ? 3 : m === 0xdb ? 5 : 0;
    return head === 0 ? undefined : this.b.toString('utf8', at + head, this.at);
  }

  private number(n: number): boolean {
    if (n >= 0 && n < 10 && Number.isInteger(n)) {
      this.out[this.o++] = 0x30 + n;
      return true;
    }
    this.o += this.out.write(String(n), this.o, 'latin1');
    return true;
  }

  private raw(text: Buffer): boolean {
    this.o += text.copy(this.out, this.o);
    return true;
  }
}

/** Whether the msgpack string at `at` of b is the fixstr key: compared here, a native compare costs more than these few bytes. */
function isKey(b: Buffer, at: number, key: Buffer): boolean {
  if (b[at] !== key[0]) return false;
  for (let i = 1; i < key.length; i++) if (b[at + i] !== key[i]) return false;
  return true;
}

/**
 * JSON lines of stored values, many into one buffer: what a state of a million objects is written
 * in, a page of objects at a time, without a buffer per object.
 */
export class JsonLines {
  private out: Buffer = Buffer.allocUnsafe(1 << 20);
  private o = 0;

  /** dropManagedFields: each object's metadata.managedFields left out. */
  constructor(private readonly dropManagedFields = false) {}

  /**
   * Appends the JSON of the msgpack value bytes[start, end) and a newline; false, appending nothing,
   * when it cannot be written exactly (msgpackToJson's rules). version: as msgpackToJson's.
   */
  add(bytes: Buffer, start = 0, end = bytes.length, version?: number): boolean {
    const t = new Transcoder(bytes, room(this.out, this.o, end - start), this.o, version, this.dropManagedFields);
    this.out = t.out;
    if (!t.whole(start, end)) return false;
    t.out[t.o++] = NEWLINE;
    this.o = t.o;
    return true;
  }

  /**
   * Appends before, the JSON of the msgpack value bytes (a whole object inside a line: a diff's
   * patch that adds it), and after (with its own newline); false, appending nothing, when the value
   * cannot be written exactly. version: as msgpackToJson's.
   */
  addInside(before: string, bytes: Buffer, after: string, version?: number): boolean {
    const o = this.o;
    this.addText(before);
    const t = new Transcoder(bytes, room(this.out, this.o, bytes.length), this.o, version, this.dropManagedFields);
    this.out = t.out;
    if (!t.whole(0, bytes.length)) {
      this.o = o;
      return false;
    }
    this.o = t.o;
    this.addText(after);
    return true;
  }

  /** Appends JSON already written (a line another process transcoded) and a newline. */
  addJson(json: Buffer): void {
    if (this.o + json.length + 1 > this.out.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.o + json.length + 1));
      this.out.copy(grown, 0, 0, this.o);
      this.out = grown;
    }
    this.o += json.copy(this.out, this.o);
    this.out[this.o++] = NEWLINE;
  }

  /** Appends text (a line written another way). */
  addText(text: string): void {
    const n = Buffer.byteLength(text);
    if (this.o + n > this.out.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.o + n));
      this.out.copy(grown, 0, 0, this.o);
      this.out = grown;
    }
    this.o += this.out.write(text, this.o);
  }

  get length(): number {
    return this.o;
  }

  /**
   * The lines so far, then starts again: a view of the buffer, valid until the next add (one
   * buffer reused: fresh ones each megabyte cost the kernel more, their pages, than the copy).
   */
  take(): Buffer {
    const lines = this.out.subarray(0, this.o);
    this.o = 0;
    return lines;
  }
}
