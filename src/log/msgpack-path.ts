/**
 * Strings of an object, each found by its path of map keys in the object's msgpack bytes (as packJson
 * writes them: plain maps with string keys), read without decoding the rest. A background scan that
 * needs a field or two of every object (Event expiry's times after a start) then builds no tree per
 * object: at 1M Events, decoding each was most of the first sweep's 16.8 s of CPU (bench/RESULTS.md 67).
 */

/** A path of keys, encoded once for stringsAt. */
export const msgpackPath = (...keys: string[]): readonly Buffer[] => keys.map((k) => Buffer.from(k, 'utf8'));

/**
 * The string at each path, where every step is a map holding the key and the value is a string, else
 * undefined (bytes that are not such a value included), in one walk of the bytes: the values a path steps over are
 * stepped over once for all of them (Event expiry's three times skipped `metadata` twice, 2.3 s of
 * the first sweep's CPU at 1M: RESULTS 67), and the walk ends once every path has its answer.
 */
export function stringsAt(b: Buffer, paths: readonly (readonly Buffer[])[]): (string | undefined)[] {
  const walk: Walk = { b, paths, out: new Array<string | undefined>(paths.length).fill(undefined), left: paths.length };
  try {
    if (walk.left > 0) inMap(walk, 0, [...paths.keys()], 0);
  } catch (err) {
    // Cut short, or a type JSON has no use for: what was found before it stands.
    if (!(err instanceof RangeError)) throw err;
  }
  return walk.out;
}

interface Walk {
  readonly b: Buffer;
  readonly paths: readonly (readonly Buffer[])[];
  readonly out: (string | undefined)[];
  /** Paths without an answer yet (a value, or the certainty there is none). */
  left: number;
}

/** Through the map at `at` for the paths `wanted` (indices), whose key at `depth` it may hold; where it ends, or -1 once no path is left. */
function inMap(w: Walk, at: number, wanted: number[], depth: number): number {
  const map = mapAt(w.b, at);
  if (!map) {
    w.left -= wanted.length; // not a map: none of them is here
    return w.left === 0 ? -1 : skip(w.b, at);
  }
  at = map.at;
  for (let i = 0; i < map.n; i++) {
    const k = stringRange(w.b, at);
    if (!k) throw new RangeError('a map key that is not a string');
    at = k.end;
    const here = wanted.length === 0 ? undefined : keyed(w, wanted, depth, k.start, k.end);
    if (!here) {
      at = skip(w.b, at);
      continue;
    }
    wanted = wanted.filter((p) => !here.includes(p)); // a key is in a map once: these are answered below
    const deeper = here.filter((p) => w.paths[p].length > depth + 1);
    if (deeper.length < here.length) {
      const v = stringRange(w.b, at);
      for (const p of here) if (w.paths[p].length === depth + 1) w.out[p] = v && w.b.toString('utf8', v.start, v.end);
      w.left -= here.length - deeper.length;
    }
    at = deeper.length > 0 ? inMap(w, at, deeper, depth + 1) : w.left === 0 ? -1 : skip(w.b, at);
    if (at === -1) return -1;
  }
  w.left -= wanted.length; // keys this map does not hold
  return w.left === 0 ? -1 : at;
}

/** The wanted paths whose key at depth is the one at b[start, end), if any (no array made for a key none wants). */
function keyed(w: Walk, wanted: readonly number[], depth: number, start: number, end: number): number[] | undefined {
  let here: number[] | undefined;
  for (const p of wanted) {
    const key = w.paths[p][depth];
    if (end - start === key.length && key.compare(w.b, start, end) === 0) (here ??= []).push(p);
  }
  return here;
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
