import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/log.js';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/store/checkpoint.js';
import { encodeStored, LazyObject, peekObject, storedApiVersion, View } from '../../src/store/view.js';
import { decodeEntry, encodeRecord, packJson } from '../../src/log/codec.js';
import { splitKey } from '../../src/store/keys.js';

/*
 * A checkpoint is the view at a sequence: decoded, it must be the same view, exact to the byte of
 * every object (a restart from it serves what was acknowledged) and as usable for what follows.
 */

const ns = (name: string, seq: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, resourceVersion: String(seq), uid: `uid-${name}` },
  ...extra,
});

function entries(): LogEntry[] {
  const out: LogEntry[] = [];
  let seq = 0;
  const put = (key: string, value: unknown) => out.push({ seq: ++seq, type: 'put', key, value });
  const del = (key: string, value: unknown) => out.push({ seq: ++seq, type: 'delete', key, value });
  put('/namespaces//b', ns('b', 1));
  put('/namespaces//a', ns('a', 2));
  put('events.orch.io/events/default/e1', { kind: 'Event', metadata: { name: 'e1', namespace: 'default' }, note: 'ключ 🎉', series: null });
  put('/namespaces//b', ns('b', 4, { metadata: { name: 'b', labels: { step: 'two' } } }));
  del('/namespaces//a', ns('a', 5));
  put('events.orch.io/events/other/e1', { kind: 'Event', metadata: { name: 'e1', namespace: 'other' } });
  // Values JSON allows that a binary encoding could bend: big and negative and fractional numbers,
  // numeric-looking strings, empties, nesting, and an own "__proto__" key (JSON.parse makes those).
  put('/namespaces//odd', {
    kind: 'Namespace',
    metadata: { name: 'odd' },
    numbers: [0, -1, 2 ** 31, 2 ** 32 + 1, -(2 ** 40), Number.MAX_SAFE_INTEGER, 1.5, -2.25, 1e300],
    strings: ['', '0012', 'true', 'null', '\u0000', 'x'.repeat(300)],
    empty: { object: {}, array: [] },
    deep: [[[{ a: [{ b: {} }] }]]],
    bools: [true, false, null],
    proto: JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}'),
  });
  put('/namespaces//a', ns('a', 8));
  return out;
}

function viewOf(list: LogEntry[]): View {
  const v = new View();
  for (const e of list) v.apply(e);
  return v;
}

/** Everything a view answers from, in a comparable form. */
function snapshot(v: View) {
  return {
    appliedSeq: v.appliedSeq,
    objects: [...v.objects.values()].map((o) => [o.key, o.seq, JSON.stringify(o.obj)]).sort(),
    collections: [...v.collections].map(([c, keys]) => [c, [...keys.range('')]]).sort(),
    history: [...v.history].map(([c, keys]) => [c, [...keys.range('')]]).sort(),
    revisions: [...v.keyIndex.entries()].map(([k, revs]) => [k, [...revs]]).sort(),
  };
}

/** Lists look objects up per collection: that index holds exactly the view's objects, the same ones. */
function expectCollectionsHoldObjects(v: View) {
  let n = 0;
  for (const c of new Set([...v.objects.keys()].map((k) => splitKey(k).collection).concat([...v.collections.keys()]))) {
    const held = v.objectsIn(c) ?? new Map();
    n += held.size;
    for (const [suffix, o] of held) expect(v.objects.get(`${c}/${suffix}`)).toBe(o);
  }
  expect(n).toBe(v.objects.size);
}

describe('checkpoint', () => {
  it('decodes to the same view, every object exact', async () => {
    const view = viewOf(entries());
    const cp = await encodeCheckpoint(view);
    expect(cp.seq).toBe(view.appliedSeq);
    const back = (await decodeCheckpoint(cp))!;
    expect(snapshot(back)).toEqual(snapshot(view));
    expectCollectionsHoldObjects(view);
    expectCollectionsHoldObjects(back);
    const odd = back.objects.get('/namespaces//odd')!.obj as any;
    expect(Object.getPrototypeOf(odd.proto)).toBe(Object.prototype);
    expect(Object.keys(odd.proto)).toEqual(['__proto__', 'plain']);
    expect(({} as any).polluted).toBeUndefined();
    // Lists walk collections in key order; a deleted key is gone from them but not from history.
    expect([...back.list('/namespaces')].map((o) => o.key)).toEqual(['/namespaces//a', '/namespaces//b', '/namespaces//odd']);
    expect(back.keyIndex.at('/namespaces//a', 6)).toBeUndefined();
    expect(back.keyIndex.at('/namespaces//a', 3)).toBe(2);
  });

  it('a decoded view goes on folding the log exactly as the original', async () => {
    const all = entries();
    const tail: LogEntry[] = [
      { seq: all.length + 1, type: 'delete', key: '/namespaces//b', value: ns('b', all.length + 1) },
      { seq: all.length + 2, type: 'put', key: '/namespaces//c', value: ns('c', all.length + 2) },
      { seq: all.length + 3, type: 'put', key: 'events.orch.io/events/default/e0', value: { kind: 'Event', metadata: { name: 'e0' } } },
    ];
    const back = (await decodeCheckpoint(await encodeCheckpoint(viewOf(all))))!;
    for (const e of tail) back.apply(e);
    expect(snapshot(back)).toEqual(snapshot(viewOf([...all, ...tail])));
    expectCollectionsHoldObjects(back);
  });

  it('an empty view round-trips', async () => {
    const back = (await decodeCheckpoint(await encodeCheckpoint(new View())))!;
    expect(snapshot(back)).toEqual(snapshot(new View()));
  });

  it('spans many parts: a view larger than one part round-trips whole', async () => {
    const many: LogEntry[] = Array.from({ length: 10_000 }, (_, i) => ({ seq: i + 1, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, i + 1) }));
    const view = viewOf(many);
    expect(snapshot((await decodeCheckpoint(await encodeCheckpoint(view)))!)).toEqual(snapshot(view));
  });

  it('parts stay near 1 MiB however large the objects, so encoding yields between small steps', async () => {
    const big = 'x'.repeat(64 * 1024);
    const many: LogEntry[] = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, i + 1, { big }) }));
    const view = viewOf(many);
    const cp = await encodeCheckpoint(view);
    const data = Buffer.from(cp.data);
    const frames: number[] = [];
    for (let at = 'orchd-checkpoint/3\n'.length; at < data.length; at += 4 + frames[frames.length - 1]) frames.push(data.readUInt32BE(at));
    // 6.4 MB of objects: several parts, none much over 1 MiB (a part ends once it passes it).
    expect(frames.length).toBeGreaterThan(5);
    expect(Math.max(...frames)).toBeLessThan(2 ** 20 + 70 * 1024);
    expect(snapshot((await decodeCheckpoint(cp))!)).toEqual(snapshot(view));
  });

  it('leaves out revisions applied while it was being encoded', async () => {
    const view = viewOf(entries());
    const at = view.appliedSeq;
    const encoding = encodeCheckpoint(view);
    view.apply({ seq: at + 1, type: 'put', key: '/namespaces//a', value: ns('a', at + 1) });
    const back = (await decodeCheckpoint(await encoding))!;
    expect(back.appliedSeq).toBe(at);
    expect(back.keyIndex.at('/namespaces//a', at + 1)).toBe(back.keyIndex.at('/namespaces//a', at));
  });

  it('is not a checkpoint when the bytes are of another format (the store then replays the log)', async () => {
    expect(await decodeCheckpoint({ seq: 5, data: Buffer.from('not a checkpoint') })).toBeUndefined();
  });
});

describe('objects held as bytes', () => {
  const read = (list: LogEntry[]) => list.map((e) => decodeEntry(e.seq, encodeRecord(e)));

  it('a view folded from entries read from storage holds them undecoded until one is read', async () => {
    const view = viewOf(read(entries()));
    const objects = [...view.objects.values()];
    expect(objects.every((o) => o instanceof LazyObject && !o.isDecoded)).toBe(true);
    expect(snapshot(view)).toEqual(snapshot(viewOf(entries())));
    expect(objects.every((o) => (o as LazyObject).isDecoded)).toBe(true);
  });

  it('a look (peekObject) decodes without keeping the object; reading obj keeps it', () => {
    const view = viewOf(read(entries()));
    const b = view.objects.get('/namespaces//b') as LazyObject;
    expect(peekObject(b).metadata.labels).toEqual({ step: 'two' });
    expect(b.isDecoded).toBe(false);
    expect(b.obj).toBe(b.obj);
    expect(b.isDecoded).toBe(true);
  });

  it('encoding an object nobody read makes its JSON from the bytes, leaving it undecoded, apiVersion known', () => {
    const view = viewOf(read(entries()));
    for (const o of view.objects.values()) {
      const json = encodeStored(o).toString('utf8');
      expect((o as LazyObject).isDecoded).toBe(false);
      expect(storedApiVersion(o)).toBe(peekObject(o).apiVersion);
      expect((o as LazyObject).isDecoded).toBe(false);
      expect(json).toBe(JSON.stringify(peekObject(o)));
      expect(encodeStored(o).toString('utf8')).toBe(json);
    }
  });

  it('a checkpoint stores the bytes it was given and loads them undecoded', async () => {
    const view = viewOf(read(entries()));
    const back = (await decodeCheckpoint(await encodeCheckpoint(view)))!;
    for (const [key, o] of view.objects) {
      const b = back.objects.get(key) as LazyObject;
      expect(b).toBeInstanceOf(LazyObject);
      expect(b.raw.equals((o as LazyObject).raw)).toBe(true);
      expect(b.isDecoded).toBe(false);
    }
    expect(snapshot(back)).toEqual(snapshot(viewOf(entries())));
  });

  it('a label index is built by looking at the objects of its collection, keeping none decoded, and follows later entries', () => {
    const view = viewOf(read(entries()));
    view.labelIndexFor('/namespaces');
    expect([...(view.labels.keys('/namespaces', 'step', 'two')?.range('') ?? [])]).toEqual(['/b']);
    expect([...view.objects.values()].some((o) => (o as LazyObject).isDecoded)).toBe(false);
    const next = view.appliedSeq + 1;
    view.apply(decodeEntry(next, encodeRecord({ type: 'put', key: '/namespaces//b', value: ns('b', next, { metadata: { name: 'b', labels: { step: 'three' } } }) })));
    expect([...(view.labels.keys('/namespaces', 'step', 'three')?.range('') ?? [])]).toEqual(['/b']);
  });

  it('a checkpoint of the earlier format (objects decoded, not bytes) still loads', async () => {
    const list = entries();
    const view = viewOf(list);
    const part = packJson({
      objects: [...view.objects.values()].map((o) => [o.key, o.seq, o.obj]),
      revs: [...view.keyIndex.entries()].map(([k, r]) => [k, [...r]]),
    });
    const head = Buffer.alloc(4);
    head.writeUInt32BE(part.length, 0);
    const data = Buffer.concat([Buffer.from('orchd-checkpoint/2\n'), head, part]);
    const back = (await decodeCheckpoint({ seq: view.appliedSeq, data }))!;
    expect(snapshot(back)).toEqual(snapshot(view));
  });
});
