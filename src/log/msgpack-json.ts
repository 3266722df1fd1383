import { isUtf8 } from 'node:buffer';

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
 */
export function msgpackToJson(bytes: Buffer): { json: Buffer; apiVersion: string | undefined } | undefined {
  const t = new Transcoder(bytes, scratch);
  try {
    if (!t.value(0) || t.at !== bytes.length) return undefined;
  } catch {
    // Truncated bytes read past the end, or nesting deeper than the stack.
    return undefined;
  } finally {
    // A grown buffer is kept for the next object unless one huge object grew it.
    if (t.out.length <= SCRATCH_KEEP) scratch = t.out;
  }
  // A copy of exactly the right size (small ones share Node's buffer pool): the cached encoding
  // holds no slack, and the scratch buffer is reused.
  return { json: Buffer.from(t.out.subarray(0, t.o)), apiVersion: t.apiVersion };
}

const SCRATCH_KEEP = 1 << 20;
let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** The escape letter JSON.stringify uses for a control character, 0 where it writes \u00XX. */
const SHORT_ESCAPE = new Uint8Array(0x20);
SHORT_ESCAPE[0x08] = 0x62; // b
SHORT_ESCAPE[0x09] = 0x74; // t
SHORT_ESCAPE[0x0a] = 0x6e; // n
SHORT_ESCAPE[0x0c] = 0x66; // f
SHORT_ESCAPE[0x0d] = 0x72; // r
/** The msgpack fixstr of "apiVersion": the one top-level key whose value is noted on the way. */
const API_VERSION = Buffer.from([0xaa, ...Buffer.from('apiVersion', 'latin1')]);
/** From this length a string is checked first, then copied natively (a shorter one byte by byte). */
const LONG_STRING = 32;
const NULL = Buffer.from('null', 'latin1');
const TRUE = Buffer.from('true', 'latin1');
const FALSE = Buffer.from('false', 'latin1');

class Transcoder {
  out: Buffer;
  o = 0;
  at = 0;
  apiVersion: string | undefined;

  constructor(
    private readonly b: Buffer,
    out: Buffer,
  ) {
    this.out = out;
  }

  /** Writes the value at `at` and moves past it; false when it cannot be written exactly. */
  value(depth: number): boolean {
    const b = this.b;
    const m = b[this.at++];
    if (m < 0x80) return this.number(m);
    if (m >= 0xe0) return this.number(m - 0x100);
    if (m <= 0x8f) return this.map(m & 0x0f, depth);
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
        return this.map(n, depth);
      case 0xdf:
        n = b.readUInt32BE(this.at);
        this.at += 4;
        return this.map(n, depth);
      default:
        return false;
    }
  }

  private map(n: number, depth: number): boolean {
    this.room(2);
    this.out[this.o++] = 0x7b;
    for (let i = 0; i < n; i++) {
      if (i > 0) this.out[this.o++] = COMMA;
      const keyAt = this.at;
      const m = this.b[this.at++];
      let len: number;
      if (m >= 0xa0 && m <= 0xbf) len = m & 0x1f;
      else if (m === 0xd9) len = this.b[this.at++];
      else if (m === 0xda) {
        len = this.b.readUInt16BE(this.at);
        this.at += 2;
      } else return false;
      if (!this.string(len)) return false;
      this.room(1);
      this.out[this.o++] = COLON;
      const valueAt = this.at;
      if (!this.value(depth + 1)) return false;
      if (depth === 0 && m === API_VERSION[0] && this.b.compare(API_VERSION, 0, API_VERSION.length, keyAt, keyAt + API_VERSION.length) === 0) this.apiVersion = this.stringAt(valueAt);
      this.room(1);
    }
    this.room(1);
    this.out[this.o++] = 0x7d;
    return true;
  }

  private array(n: number, depth: number): boolean {
    this.room(2);
    this.out[this.o++] = 0x5b;
    for (let i = 0; i < n; i++) {
      if (i > 0) this.out[this.o++] = COMMA;
      if (!this.value(depth + 1)) return false;
      this.room(1);
    }
    this.out[this.o++] = 0x5d;
    return true;
  }

  private string(len: number): boolean {
    const b = this.b;
    const start = this.at;
    const end = start + len;
    if (end > b.length) return false;
    if (len >= LONG_STRING && this.plain(start, end)) {
      this.room(len + 2);
      this.out[this.o++] = QUOTE;
      this.o += b.copy(this.out, this.o, start, end);
      this.out[this.o++] = QUOTE;
      this.at = end;
      return true;
    }
    // Worst case every byte becomes \u00XX.
    this.room(len * 6 + 2);
    const out = this.out;
    let o = this.o;
    let high = false;
    out[o++] = QUOTE;
    for (let i = start; i < end; i++) {
      const c = b[i];
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        if (c >= 0x80) high = true;
        out[o++] = c;
        continue;
      }
      out[o++] = BACKSLASH;
      if (c >= 0x20) out[o++] = c;
      else if (SHORT_ESCAPE[c] !== 0) out[o++] = SHORT_ESCAPE[c];
      else {
        out[o++] = 0x75; // u
        out[o++] = 0x30;
        out[o++] = 0x30;
        out[o++] = HEX[c >> 4];
        out[o++] = HEX[c & 15];
      }
    }
    out[o++] = QUOTE;
    if (high && !isUtf8(b.subarray(start, end))) return false;
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

  /** Whether bytes start..end are well-formed UTF-8 with nothing JSON escapes: copied as they are. */
  private plain(start: number, end: number): boolean {
    const b = this.b;
    let high = false;
    for (let i = start; i < end; i++) {
      const c = b[i];
      if (c < 0x20 || c === QUOTE || c === BACKSLASH) return false;
      if (c >= 0x80) high = true;
    }
    return !high || isUtf8(b.subarray(start, end));
  }

  private number(n: number): boolean {
    if (n >= 0 && n < 10 && Number.isInteger(n)) {
      this.room(1);
      this.out[this.o++] = 0x30 + n;
      return true;
    }
    const s = String(n);
    this.room(s.length);
    this.o += this.out.write(s, this.o, 'latin1');
    return true;
  }

  private raw(text: Buffer): boolean {
    this.room(text.length);
    this.o += text.copy(this.out, this.o);
    return true;
  }

  /** Makes room for n more bytes of output. */
  private room(n: number): void {
    if (this.o + n <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.o + n));
    this.out.copy(grown, 0, 0, this.o);
    this.out = grown;
  }
}
