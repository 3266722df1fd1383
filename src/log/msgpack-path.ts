/**
 * One string of an object, found by its path of map keys in the object's msgpack bytes (as packJson
 * writes them: plain maps with string keys), read without decoding the rest. A background scan that
 * needs a field or two of every object (Event expiry's times after a start) then builds no tree per
 * object: at 1M Events, decoding each was most of the first sweep's 16.8 s of CPU (bench/RESULTS.md 67).
 */

/** A path of keys, encoded once for stringAt. */
export const msgpackPath = (...keys: string[]): readonly Buffer[] => keys.map((k) => Buffer.from(k, 'utf8'));

/** The string at path, when every step is a map holding the key and the value is a string; else undefined (bytes that are not such a value included). */
export function stringAt(b: Buffer, path: readonly Buffer[]): string | undefined {
  try {
    let at = 0;
    for (const key of path) {
      const map = mapAt(b, at);
      if (!map) return undefined;
      at = map.at;
      let found = false;
      for (let i = 0; i < map.n && !found; i++) {
        const k = stringRange(b, at);
        if (!k) return undefined;
        at = k.end;
        if (k.end - k.start === key.length && key.compare(b, k.start, k.end) === 0) found = true;
        else at = skip(b, at);
      }
      if (!found) return undefined;
    }
    const v = stringRange(b, at);
    return v && v.end <= b.length ? b.toString('utf8', v.start, v.end) : undefined;
  } catch (err) {
    if (err instanceof RangeError) return undefined; // cut short, or a type JSON has no use for
    throw err;
  }
}

function mapAt(b: Buffer, at: number): { n: number; at: number } | undefined {
  const t = b.readUInt8(at);
  if (t >= 0x80 && t <= 0x8f) return { n: t & 0x0f, at: at + 1 };
  if (t === 0xde) return { n: b.readUInt16BE(at + 1), at: at + 3 };
  if (t === 0xdf) return { n: b.readUInt32BE(at + 1), at: at + 5 };
  return undefined;
}

function stringRange(b: Buffer, at: number): { start: number; end: number } | undefined {
  const t = b.readUInt8(at);
  let start: number;
  let n: number;
  if (t >= 0xa0 && t <= 0xbf) [start, n] = [at + 1, t & 0x1f];
  else if (t === 0xd9) [start, n] = [at + 2, b.readUInt8(at + 1)];
  else if (t === 0xda) [start, n] = [at + 3, b.readUInt16BE(at + 1)];
  else if (t === 0xdb) [start, n] = [at + 5, b.readUInt32BE(at + 1)];
  else return undefined;
  if (start + n > b.length) throw new RangeError('a string runs past the end');
  return { start, end: start + n };
}

/** Where the value at `at` ends: its nested maps and arrays counted, not visited one by one. */
function skip(b: Buffer, at: number): number {
  for (let pending = 1; pending > 0; pending--) {
    const t = b.readUInt8(at++);
    if (t <= 0x7f || t >= 0xe0) continue; // fixints
    if (t <= 0x8f) pending += 2 * (t & 0x0f);
    else if (t <= 0x9f) pending += t & 0x0f;
    else if (t <= 0xbf) at += t & 0x1f;
    else at = skipTyped(b, t, at, (n) => (pending += n));
  }
  if (at > b.length) throw new RangeError('a value runs past the end');
  return at;
}

/** Past a value of a typed head (0xc0–0xdf) whose type byte was just read; containers add their items to count instead. */
function skipTyped(b: Buffer, t: number, at: number, count: (items: number) => void): number {
  switch (t) {
    case 0xc0: // nil, false, true
    case 0xc2:
    case 0xc3:
      return at;
    case 0xc4: // bin8, str8
    case 0xd9:
      return at + 1 + b.readUInt8(at);
    case 0xc5: // bin16, str16
    case 0xda:
      return at + 2 + b.readUInt16BE(at);
    case 0xc6: // bin32, str32
    case 0xdb:
      return at + 4 + b.readUInt32BE(at);
    case 0xc7: // ext8/16/32: length, type, data
      return at + 2 + b.readUInt8(at);
    case 0xc8:
      return at + 3 + b.readUInt16BE(at);
    case 0xc9:
      return at + 5 + b.readUInt32BE(at);
    case 0xdc: // array16/32, map16/32
      count(b.readUInt16BE(at));
      return at + 2;
    case 0xdd:
      count(b.readUInt32BE(at));
      return at + 4;
    case 0xde:
      count(2 * b.readUInt16BE(at));
      return at + 2;
    case 0xdf:
      count(2 * b.readUInt32BE(at));
      return at + 4;
  }
  const fixed = FIXED_SIZE[t];
  if (fixed === undefined) throw new RangeError(`msgpack type 0x${t.toString(16)}`);
  return at + fixed;
}

/** Bytes after the type byte of the fixed-size types: floats, ints, fixexts (type byte and data). */
const FIXED_SIZE: Record<number, number> = {
  0xca: 4,
  0xcb: 8,
  0xcc: 1,
  0xcd: 2,
  0xce: 4,
  0xcf: 8,
  0xd0: 1,
  0xd1: 2,
  0xd2: 4,
  0xd3: 8,
  0xd4: 2,
  0xd5: 3,
  0xd6: 5,
  0xd7: 9,
  0xd8: 17,
};
