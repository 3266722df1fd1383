import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SelectorError } from '../../src/selectors/label-selector.js';
import { fnv1a64, parseShardSelector } from '../../src/selectors/shard-selector.js';

/** The textbook definition, in BigInt: the reference the fast two-halves version must equal. */
function reference(s: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s, 'utf8')) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

const obj = (uid: string, namespace?: string) => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'n', uid, ...(namespace ? { namespace } : {}) } });

describe('FNV-1a 64', () => {
  it('matches the published test vectors', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('matches the BigInt definition on random and non-ASCII input', () => {
    for (const s of ['héllo wörld', '日本', ...Array.from({ length: 500 }, () => randomUUID())]) expect(fnv1a64(s)).toBe(reference(s));
  });
});

describe('shard selector grammar', () => {
  it('accepts one range, or several joined by ||, in either quote style, and normalizes the text', () => {
    const s = parseShardSelector(` shardRange(object.metadata.uid, "0x0000000000000000", '0x8000000000000000') ||shardRange( object.metadata.uid ,'0xc000000000000000','0x10000000000000000')`);
    expect(s.ranges).toHaveLength(2);
    expect(s.text).toBe("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')");
  });

  it("accepts the spec's own bounds, 0x0 and 0x10000000000000000, and shorter hex values, read as numbers", () => {
    const all = parseShardSelector("shardRange(object.metadata.uid, '0x0', '0x10000000000000000')");
    expect(all.text).toBe("shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')");
    for (let i = 0; i < 50; i++) expect(all.matches(obj(randomUUID()))).toBe(true);
    // '0xff' is 255, not 0xff00000000000000: a uid hashing above 255 is outside [0x0, 0xff).
    const low = parseShardSelector("shardRange(object.metadata.uid, '0x0', '0xff')");
    expect(low.ranges[0].end).toBe('0x00000000000000ff');
    expect(low.matches(obj(randomUUID()))).toBe(false);
  });

  it('matches inclusive start, exclusive end over the hash of the field', () => {
    const uid = randomUUID();
    const h = fnv1a64(uid);
    const next = (BigInt('0x' + h) + 1n).toString(16).padStart(16, '0');
    const at = parseShardSelector(`shardRange(object.metadata.uid, '0x${h}', '0x${next}')`);
    expect(at.matches(obj(uid))).toBe(true);
    const below = parseShardSelector(`shardRange(object.metadata.uid, '0x0000000000000000', '0x${h}')`);
    expect(below.matches(obj(uid))).toBe(false);
  });

  it('hashes the namespace when asked to', () => {
    const h = fnv1a64('team-a');
    const next = (BigInt('0x' + h) + 1n).toString(16).padStart(16, '0');
    const s = parseShardSelector(`shardRange(object.metadata.namespace, '0x${h}', '0x${next}')`);
    expect(s.matches(obj(randomUUID(), 'team-a'))).toBe(true);
    expect(s.matches(obj(randomUUID(), 'team-b'))).toBe(false);
  });

  it.each([
    ['empty', '  ', 'empty shard selector is not allowed'],
    ['other function', "hash(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')", 'unsupported function "hash"'],
    ['unsupported path', "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", 'unsupported field path "object.metadata.name"'],
    ['two arguments', "shardRange(object.metadata.uid, '0x0000000000000000')", 'requires exactly 3 arguments, got 2'],
    ['18 hex digits', "shardRange(object.metadata.uid, '0x0000000000000000', '0x000000000000000000')", 'hex value too long (18 chars, max 17)'],
    ['no 0x', "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')", "hexStart must have '0x' prefix"],
    ['upper-case hex', "shardRange(object.metadata.uid, '0x000000000000000A', '0x8000000000000000')", 'invalid hex character "A"'],
    ['17 digits but not 2^64', "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')", "17-digit hex value must be '0x10000000000000000'"],
    ['start not below end', "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')", 'must be less than end'],
    ['bound not a string', 'shardRange(object.metadata.uid, 0, 1)', 'hexStart must be a string literal'],
    [
      'mixed fields',
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
      'all shard ranges must use the same field',
    ],
    [
      '&& instead of ||',
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') && shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
      'token recognition error',
    ],
    ['trailing junk', "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') x", 'extraneous input'],
  ])('rejects %s', (_n, text, message) => {
    let err: unknown;
    try {
      parseShardSelector(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SelectorError);
    expect((err as Error).message).toContain(message);
  });
});
