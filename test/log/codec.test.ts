import { describe, expect, it } from 'vitest';
import { HORIZON_KEY, checkpointHead, decodeEntry, encodeRecord, framePart, packJson, readCheckpointHead, readSeq, seqKey, stampTime, unframeParts, unpackJson } from '../../src/log/codec.js';

const BOUNDARIES = [0, 1, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40, Number.MAX_SAFE_INTEGER];

describe('seq keys', () => {
  it.each(BOUNDARIES)('%d survives the round trip', (seq) => {
    expect(readSeq(seqKey(seq))).toBe(seq);
  });

  it('byte order is seq order, across every byte boundary', () => {
    for (let i = 1; i < BOUNDARIES.length; i++) {
      expect(Buffer.compare(seqKey(BOUNDARIES[i - 1]), seqKey(BOUNDARIES[i]))).toBe(-1);
    }
  });

  it('the horizon key sorts after every entry key', () => {
    expect(Buffer.compare(HORIZON_KEY, seqKey(Number.MAX_SAFE_INTEGER))).toBe(1);
  });
});

describe('records', () => {
  it.each(['put', 'delete'] as const)('a %s record decodes to the same entry', (type) => {
    const value = { metadata: { name: 'x', resourceVersion: '9' }, data: { '01': '1' } };
    const e = decodeEntry(9, encodeRecord({ type, key: 'ns/x', value }));
    expect({ seq: e.seq, type: e.type, key: e.key, value: e.value }).toEqual({ seq: 9, type, key: 'ns/x', value });
  });

  it.each([
    ['a short key', 'ns/x'],
    ['a 40-byte key', 'k'.repeat(40)],
    ['a 300-byte key', 'k'.repeat(300)],
    ['a 70000-byte key', 'k'.repeat(70_000)],
    ['a non-ASCII key', 'ns/ключ-漢字'],
  ])('a record with %s carries the time stamped into it, and decodes whole the same way', (_name, key) => {
    const bytes = encodeRecord({ type: 'put', key, value: { a: [1, 'x'] } });
    stampTime(bytes, 1_795_000_000_123);
    const e = decodeEntry(3, bytes);
    expect({ key: e.key, time: e.time, value: e.value }).toEqual({ key, time: 1_795_000_000_123, value: { a: [1, 'x'] } });
    // Any msgpack reader sees the same record: the layout written by hand is plain msgpack.
    expect(unpackJson(bytes)).toEqual({ t: 'p', c: 1_795_000_000_123, k: key, v: { a: [1, 'x'] } });
  });

  it.each([
    ['as msgpackr wrote them (map16)', packJson({ t: 'd', k: 'ns/old', v: { n: 1 } })],
    ['as a fixmap', Buffer.concat([Buffer.from([0x83]), packJson({ t: 'd', k: 'ns/old', v: { n: 1 } }).subarray(3)])],
  ])('a record written before the log kept times still reads, without a time (%s)', (_name, bytes) => {
    const e = decodeEntry(4, bytes);
    expect({ seq: e.seq, type: e.type, key: e.key, value: e.value, time: e.time }).toEqual({ seq: 4, type: 'delete', key: 'ns/old', value: { n: 1 }, time: undefined });
  });

  it('a "__proto__" key comes back as an own property, not as the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const { value: got } = decodeEntry(1, encodeRecord({ type: 'put', key: 'k', value }));
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.keys(got as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // Pinned so that a change is noticed: strings must arrive well-formed (the JSON edge's job, as Go's
  // encoding/json does it), because the log cannot keep a lone surrogate.
  it('a lone surrogate (not valid UTF-16) comes back as U+FFFD, never as itself', () => {
    const { value } = decodeEntry(1, encodeRecord({ type: 'put', key: 'k', value: { s: 'a\ud800b', long: '\udc00'.repeat(40) } }));
    const { s, long } = value as { s: string; long: string };
    expect(s).toMatch(/^a\ufffd+b$/);
    expect(long).toMatch(/^\ufffd+$/);
  });

  it.each([
    ['not a map', Buffer.from([0xc0])],
    ['a map without t', encodeRecord({ type: 'put', key: 'k', value: 1 }).subarray(0, 1)],
    ['truncated', encodeRecord({ type: 'put', key: 'k', value: 'x'.repeat(100) }).subarray(0, 20)],
  ])('bytes that are %s are refused', (_name, bytes) => {
    // A value read from storage is decoded when first used: bad bytes are refused then at the latest.
    expect(() => decodeEntry(1, bytes).value).toThrow();
  });
});

describe('checkpoints', () => {
  it.each([0, 7, 2 ** 40 + 3])('the head of a checkpoint at %d names its seq', (seq) => {
    expect(readCheckpointHead(checkpointHead(seq))).toBe(seq);
  });

  it('a head without the mark names none', () => {
    expect(readCheckpointHead(Buffer.concat([seqKey(5), Buffer.from('orchd-c')]))).toBeUndefined();
    expect(readCheckpointHead(Buffer.concat([seqKey(5), Buffer.from('orchd-ch')]))).toBeUndefined();
  });

  it('framed parts come back as the pieces of each joined; a cut frame is refused', () => {
    const framed = Buffer.concat([...framePart([Buffer.from([1, 2]), Buffer.from([3])]), ...framePart([]), ...framePart([Buffer.from([255])])]);
    expect(unframeParts(framed).map((p) => [...p])).toEqual([[1, 2, 3], [], [255]]);
    expect(() => unframeParts(framed.subarray(0, framed.length - 1))).toThrow(/inside a part/);
    expect(() => unframeParts(framed.subarray(0, 2))).toThrow(/inside a part/);
  });
});

describe('records read without decoding their value', () => {
  const value = { metadata: { name: 'x', labels: { a: 'ключ 🎉' } }, note: 'y'.repeat(100) };
  /** A decoded value carries its entry's seq as its resourceVersion, whatever its bytes hold. */
  const stamped = (seq: number) => ({ ...value, metadata: { ...value.metadata, resourceVersion: String(seq) } });
  // fixstr, str8, str16 keys: each header form msgpack has for a string of that length.
  it.each([5, 31, 32, 255, 256, 70_000])('a record with a %d-byte key gives its key and type from the header, its value as bytes', (n) => {
    const key = `g/r/ns/${'é'.repeat(Math.max(0, Math.ceil((n - 7) / 2)))}`.slice(0, n);
    for (const type of ['put', 'delete'] as const) {
      const e = decodeEntry(7, encodeRecord({ type, key, value }));
      expect(e.raw).toBeInstanceOf(Buffer);
      expect({ seq: e.seq, type: e.type, key: e.key }).toEqual({ seq: 7, type, key });
      expect(e.value).toEqual(stamped(7));
    }
  });

  it('a record laid out otherwise (keys in another order) still decodes whole', () => {
    const bytes = packJson({ k: 'g/r/ns/x', v: value, t: 'd' });
    const e = decodeEntry(3, bytes);
    expect(e.raw).toBeUndefined();
    expect(e).toEqual({ seq: 3, type: 'delete', key: 'g/r/ns/x', value: stamped(3) });
  });

  it('a value holding "__proto__" decodes from its bytes as an own property', () => {
    const proto = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const e = decodeEntry(1, encodeRecord({ type: 'put', key: 'k', value: proto }));
    expect(e.raw).toBeDefined();
    expect(Object.keys(e.value as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
