/**
 * What a string's bytes hold, as JSON sees them: whether they can be copied into JSON as they are
 * (msgpack-json.ts), checked a byte or a word at a time.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** The escape letter JSON.stringify uses for a control character, 0 where it writes \u00XX. */
const SHORT_ESCAPE = new Uint8Array(0x20);
SHORT_ESCAPE[0x08] = 0x62; // b
SHORT_ESCAPE[0x09] = 0x74; // t
SHORT_ESCAPE[0x0a] = 0x6e; // n
SHORT_ESCAPE[0x0c] = 0x66; // f
SHORT_ESCAPE[0x0d] = 0x72; // r

/**
 * What each byte of a string becomes in JSON: 0 copied as it is, 1 copied and not ASCII (the
 * string is then checked to be UTF-8), 2 escaped.
 */
export const BYTE = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) BYTE[c] = 2;
BYTE[QUOTE] = 2;
BYTE[BACKSLASH] = 2;
for (let c = 0x80; c < 0x100; c++) BYTE[c] = 1;

/*
 * Four bytes at a time: x is a little-endian word of a string's bytes. A byte below 0x20 shows as a
 * borrow ((x - 0x20…) & ~x), '"' and '\\' as a zero byte of x XOR theirs ((y - 0x01…) & ~y): each
 * test is exact for whether any of the four is one (not for which), all that is asked. A byte from
 * 0x80 (not ASCII: the string is then checked to be UTF-8) shows as its top bit.
 */
function escapeBits(x: number): number {
  const q = x ^ 0x22222222;
  const z = x ^ 0x5c5c5c5c;
  return ((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((z - 0x01010101) & ~z);
}

/** BYTE's kinds of words whose escapeBits and bits were ORed. */
const wordKinds = (escape: number, high: number): number => ((escape & 0x80808080) !== 0 ? 2 : 0) | ((high & 0x80808080) !== 0 ? 1 : 0);

/** What the bytes b[start, end) hold, as BYTE's kinds ORed (0: copied as they are), four at a time. */
export function scan(b: Buffer, start: number, end: number): number {
  const input = viewOf(b);
  const base = b.byteOffset;
  let escape = 0;
  let high = 0;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const x = input.getInt32(base + i, true);
    escape |= escapeBits(x);
    high |= x;
  }
  let kinds = wordKinds(escape, high);
  for (; i < end; i++) kinds |= BYTE[b[i]];
  return kinds;
}

/** A DataView of the whole memory the input is in (words read at any offset), made again only when that is another's: many values share one buffer. */
let inView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
/** inView's buffer, kept apart: DataView's buffer getter is a call the compiler does not inline. */
let inOf: ArrayBufferLike = inView.buffer;
function viewOf(b: Buffer): DataView {
  if (inOf !== b.buffer) inView = new DataView((inOf = b.buffer));
  return inView;
}

/** Writes b[start, end) into out at o as JSON.stringify escapes a string's bytes; where it ends. */
export function writeEscaped(b: Buffer, start: number, end: number, out: Buffer, o: number): number {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (BYTE[c] !== 2) {
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
  return o;
}
