import { describe, expect, it } from 'vitest';
import { partBuffer, type Checkpoint, type LogEntry, type SavedCheckpoint } from '../../src/log/log.js';
import { decodeCheckpoint, encodeCheckpoint, type ReadRevision } from '../../src/store/checkpoint-format.js';
import { encodeStored, LazyObject, peekObject, storedApiVersion, storedOf, View } from '../../src/store/view.js';
import { decodeEntry, encodeRecord } from '../../src/log/codec.js';
import { stampVersion } from '../../src/log/stamp.js';
import type { LazySlots } from '../../src/store/lazy-slots.js';

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
  // As a log hands them out: each value carries its entry's seq (log/stamp.ts).
  const put = (key: string, value: unknown) => out.push({ seq: ++seq, type: 'put', key, value: stampVersion(value, seq) });
  const del = (key: string, value: unknown) => out.push({ seq: ++seq, type: 'delete', key, value: stampVersion(value, seq) });
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
    size: v.size,
    objects: [...v.objects()].map((o) => [o.key, o.seq, JSON.stringify(o.obj)]).sort(),
    collections: [...v.collections].map(([c, keys]) => [c, [...keys.range('')]]).sort(),
    history: [...v.history].map(([c, keys]) => [c, [...keys.range('')]]).sort(),
    revisions: [...v.history].flatMap(([c, keys]) => [...keys.range('')].map((s) => [`${c}/${s}`, v.slotsOf(c)?.get(s)?.list()])).sort(),
  };
}

/** The sorted keys agree with the slots: a collection's keys are those holding an object, its history every slot. */
function expectKeysMatchSlots(v: View) {
  let held = 0;
  for (const c of new Set([...v.collections.keys(), ...v.history.keys()])) {
    const slots = [...(v.slotsOf(c) ?? new Map())].sort(([a], [b]) => (a < b ? -1 : 1));
    expect([...(v.history.get(c)?.range('') ?? [])]).toEqual(slots.map(([s]) => s));
    const current = slots.filter(([, slot]) => slot.cur !== undefined);
    expect([...(v.collections.get(c)?.range('') ?? [])]).toEqual(current.map(([s]) => s));
    for (const [s, slot] of current) expect(v.get(`${c}/${s}`)).toBe(slot.cur);
    held += current.length;
  }
  expect(held).toBe(v.size);
}

/** The checkpoint as a log gives it back: each part's pieces joined into one buffer. */
async function saved(cp: Checkpoint): Promise<SavedCheckpoint> {
  const parts: Buffer[] = [];
  for await (const pieces of cp.parts) parts.push(Buffer.concat(pieces));
  return {
    seq: cp.seq,
    parts: (async function* () {
      yield* parts;
    })(),
  };
}

/** Nothing changes while these checkpoints are encoded: no revision is read back from a log. */
const noLog: ReadRevision = (key, rev) => Promise.reject(new Error(`unexpected read of ${key} at ${rev}`));

/** Reads revisions back from the entries a view was folded from, as the store reads its log. */
const readFrom =
  (list: LogEntry[]): ReadRevision =>
  async (key, rev) => {
    const e = list.find((x) => x.seq === rev && x.key === key);
    if (!e) throw new Error(`no entry ${rev} of ${key}`);
    return storedOf(e, key, rev);
  };

const roundTrip = async (v: View): Promise<View> => (await decodeCheckpoint(await saved(encodeCheckpoint(v, noLog))))!;

describe('checkpoint', () => {
  it('decodes to the same view, every object exact', async () => {
    const view = viewOf(entries());
    const cp = encodeCheckpoint(view, noLog);
    expect(cp.seq).toBe(view.appliedSeq);
    const back = (await decodeCheckpoint(await saved(cp)))!;
    expect(snapshot(back)).toEqual(snapshot(view));
    expectKeysMatchSlots(view);
    expectKeysMatchSlots(back);
    const odd = back.get('/namespaces//odd')!.obj as any;
    expect(Object.getPrototypeOf(odd.proto)).toBe(Object.prototype);
    expect(Object.keys(odd.proto)).toEqual(['__proto__', 'plain']);
    expect(({} as any).polluted).toBeUndefined();
    // Lists walk collections in key order; a deleted key is gone from them but not from history.
    expect([...back.list('/namespaces')].map((o) => o.key)).toEqual(['/namespaces//a', '/namespaces//b', '/namespaces//odd']);
    expect(back.revisionAt('/namespaces//a', 6)).toBeUndefined();
    expect(back.revisionAt('/namespaces//a', 3)).toBe(2);
  });

  it('a decoded view goes on folding the log exactly as the original', async () => {
    const all = entries();
    const tail: LogEntry[] = [
      { seq: all.length + 1, type: 'delete', key: '/namespaces//b', value: ns('b', all.length + 1) },
      { seq: all.length + 2, type: 'put', key: '/namespaces//c', value: ns('c', all.length + 2) },
      { seq: all.length + 3, type: 'put', key: 'events.orch.io/events/default/e0', value: { kind: 'Event', metadata: { name: 'e0' } } },
    ];
    const back = await roundTrip(viewOf(all));
    for (const e of tail) back.apply(e);
    expect(snapshot(back)).toEqual(snapshot(viewOf([...all, ...tail])));
    expectKeysMatchSlots(back);
  });

  it('an empty view round-trips', async () => {
    expect(snapshot(await roundTrip(new View()))).toEqual(snapshot(new View()));
  });

  it('spans many parts: a view larger than one part round-trips whole', async () => {
    const many: LogEntry[] = Array.from({ length: 10_000 }, (_, i) => ({ seq: i + 1, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, i + 1) }));
    const view = viewOf(many);
    expect(snapshot(await roundTrip(view))).toEqual(snapshot(view));
  });

  it('parts stay near 1 MiB however large the objects, so encoding yields between small steps', async () => {
    const big = 'x'.repeat(64 * 1024);
    const many: LogEntry[] = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, i + 1, { big }) }));
    const view = viewOf(many);
    const cp = await saved(encodeCheckpoint(view, noLog));
    const parts: Buffer[] = [];
    for await (const part of cp.parts) parts.push(partBuffer(part));
    // 6.4 MB of objects: several parts, none much over 1 MiB (a part ends once it passes it).
    expect(parts.length).toBeGreaterThan(5);
    expect(Math.max(...parts.map((p) => p.length))).toBeLessThan(2 ** 20 + 70 * 1024);
    const again = (async function* () {
      yield* parts;
    })();
    expect(snapshot((await decodeCheckpoint({ seq: cp.seq, parts: again }))!)).toEqual(snapshot(view));
  });

  it('leaves out revisions applied while it was being encoded', async () => {
    const list = entries();
    const view = viewOf(list);
    const at = view.appliedSeq;
    const encoding = encodeCheckpoint(view, readFrom(list));
    // After the encoding started: an update (the checkpoint reads what /a held at its version back
    // from the log), a delete, and a new key (left out).
    view.apply({ seq: at + 1, type: 'put', key: '/namespaces//a', value: ns('a', at + 1) });
    view.apply({ seq: at + 2, type: 'delete', key: '/namespaces//b', value: ns('b', at + 2) });
    view.apply({ seq: at + 3, type: 'put', key: '/namespaces//new', value: ns('new', at + 3) });
    const back = (await decodeCheckpoint(await saved(encoding)))!;
    expect(back.appliedSeq).toBe(at);
    expect(snapshot(back)).toEqual(snapshot(viewOf(entries())));
  });

  it('is not a checkpoint when the bytes are of another format (the store then replays the log)', async () => {
    const parts = async function* (list: Buffer[]) {
      yield* list;
    };
    expect(await decodeCheckpoint({ seq: 5, parts: parts([Buffer.from('not a checkpoint')]) })).toBeUndefined();
    expect(await decodeCheckpoint({ seq: 5, parts: parts([]) })).toBeUndefined();
  });
});

describe('objects held as bytes', () => {
  const read = (list: LogEntry[]) => list.map((e) => decodeEntry(e.seq, encodeRecord(e)));

  it('a view folded from entries read from storage holds them undecoded until one is read', async () => {
    const view = viewOf(read(entries()));
    const objects = [...view.objects()];
    expect(objects.every((o) => o instanceof LazyObject && !o.isDecoded)).toBe(true);
    expect(snapshot(view)).toEqual(snapshot(viewOf(entries())));
    expect(objects.every((o) => (o as LazyObject).isDecoded)).toBe(true);
  });

  it('a look (peekObject) decodes without keeping the object; reading obj keeps it', () => {
    const view = viewOf(read(entries()));
    const b = view.get('/namespaces//b') as LazyObject;
    expect(peekObject(b).metadata.labels).toEqual({ step: 'two' });
    expect(b.isDecoded).toBe(false);
    expect(b.obj).toBe(b.obj);
    expect(b.isDecoded).toBe(true);
  });

  it('encoding an object nobody read makes its JSON from the bytes, leaving it undecoded, apiVersion known', () => {
    const view = viewOf(read(entries()));
    for (const o of view.objects()) {
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
    const back = await roundTrip(view);
    for (const o of view.objects()) {
      const b = back.get(o.key) as LazyObject;
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
    expect([...view.objects()].some((o) => (o as LazyObject).isDecoded)).toBe(false);
    const next = view.appliedSeq + 1;
    view.apply(decodeEntry(next, encodeRecord({ type: 'put', key: '/namespaces//b', value: ns('b', next, { metadata: { name: 'b', labels: { step: 'three' } } }) })));
    expect([...(view.labels.keys('/namespaces', 'step', 'three')?.range('') ?? [])]).toEqual(['/b']);
  });
});

describe('shared buffers', () => {
  /** n Namespaces read from storage as one page: their bytes are views of one buffer, as leveldb-log.ts reads them. */
  function page(n: number): { view: View; slab: ArrayBufferLike } {
    const records = Array.from({ length: n }, (_, i) => encodeRecord({ type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, i + 1, { note: 'x'.repeat(1000) }) }));
    const slab = Buffer.concat(records);
    const view = new View();
    let at = 0;
    records.forEach((r, i) => {
      view.apply(decodeEntry(i + 1, slab, at, at + r.length));
      at += r.length;
    });
    return { view, slab: slab.buffer };
  }

  it('objects left alone on a mostly replaced page get bytes of their own, unchanged; a mostly current page stays shared', async () => {
    const { view, slab } = page(100);
    for (let i = 0; i < 90; i++) view.apply({ seq: 101 + i, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, 101 + i) });
    const before = Array.from(view.objects(), (o) => JSON.stringify(o.obj));
    expect(await view.releaseBuffers()).toBe(10);
    const left = [...view.objects()].filter((o) => o instanceof LazyObject) as LazyObject[];
    expect(left).toHaveLength(10);
    expect(left.every((o) => o.raw.buffer !== slab)).toBe(true);
    expect(Array.from(view.objects(), (o) => JSON.stringify(o.obj))).toEqual(before);
    expect(await view.releaseBuffers()).toBe(0);

    const busy = page(100);
    for (let i = 0; i < 10; i++) busy.view.apply({ seq: 101 + i, type: 'put', key: `/namespaces//n${i}`, value: ns(`n${i}`, 101 + i) });
    expect(await busy.view.releaseBuffers()).toBe(0);
    expect([...busy.view.objects()].filter((o) => o instanceof LazyObject).every((o) => (o as LazyObject).raw.buffer === busy.slab)).toBe(true);
  });
});

describe('a loaded checkpoint makes slots part by part, on first use', () => {
  const N = 10_000;
  const many = (): LogEntry[] =>
    Array.from({ length: N }, (_, i) => ({ seq: i + 1, type: 'put', key: `/namespaces//n${String(i).padStart(5, '0')}`, value: ns(`n${i}`, i + 1, { note: 'x'.repeat(500) }) }));
  /** The checkpoint's parts as the LevelDB log reads them: views of one buffer. */
  async function loadedFromOneBuffer(v: View): Promise<View> {
    const cp = await saved(encodeCheckpoint(v, noLog));
    const parts: Buffer[] = [];
    for await (const p of cp.parts) parts.push(partBuffer(p));
    const whole = Buffer.concat(parts);
    let at = 0;
    const views = parts.map((p) => whole.subarray(at, (at += p.length)));
    return (await decodeCheckpoint({
      seq: cp.seq,
      parts: (async function* () {
        yield* views;
      })(),
    }))!;
  }
  const unmade = (v: View) => (v.slotsOf('/namespaces') as LazySlots).unmade;

  it('answers /readyz-time questions (size, sorted keys) without making any; a read makes only its part', async () => {
    const back = await roundTrip(viewOf(read(many())));
    const parts = unmade(back);
    expect(parts).toBeGreaterThan(2);
    expect(back.size).toBe(N);
    expect(back.collections.get('/namespaces')?.size).toBe(N);
    expect(unmade(back)).toBe(parts);
    expect(back.get('/namespaces//n05000')?.seq).toBe(5001);
    expect(unmade(back)).toBe(parts - 1);
    expect(back.get('/namespaces//n05001')?.seq).toBe(5002);
    expect(unmade(back)).toBe(parts - 1);
    // A key between or past the parts' keys makes nothing and is absent.
    expect(back.get('/namespaces//zzz')).toBeUndefined();
    expect(back.slotsOf('/namespaces')?.size).toBe(N);
    expect(unmade(back)).toBe(0);
  });

  it('writes into parts not yet made fold exactly as into the original view', async () => {
    const all = read(many());
    const back = await roundTrip(viewOf(all));
    const tail: LogEntry[] = [
      { seq: N + 1, type: 'put', key: '/namespaces//n09999', value: ns('n9999', N + 1) },
      { seq: N + 2, type: 'delete', key: '/namespaces//n00000', value: ns('n0', N + 2) },
      { seq: N + 3, type: 'put', key: '/namespaces//n05000a', value: ns('n5000a', N + 3) },
      { seq: N + 4, type: 'put', key: '/namespaces//a', value: ns('a', N + 4) },
    ];
    for (const e of tail) back.apply(e);
    expect(unmade(back)).toBeGreaterThan(0);
    expect(back.get('/namespaces//n09999')?.seq).toBe(N + 1);
    expect(back.get('/namespaces//n00000')).toBeUndefined();
    expect(back.revisionAt('/namespaces//n00000', N)).toBe(1);
    expect(snapshot(back)).toEqual(snapshot(viewOf([...all, ...tail])));
    expectKeysMatchSlots(back);
  });

  it('makes the parts a prefix may hold keys in one per turn, before a walk of them would make them at once', async () => {
    const back = await roundTrip(viewOf(read(many())));
    const slots = back.slotsOf('/namespaces') as LazySlots;
    const parts = slots.unmade;
    const prefix = [...back.collections.get('/namespaces')!.range('', undefined)][5000].slice(0, -3); // the keys of n05000–n05999
    let turns = 0;
    await slots.makeEach(prefix, async () => turns++);
    expect(turns).toBeGreaterThan(0);
    expect(turns).toBeLessThan(parts / 2);
    expect(slots.unmade).toBe(parts - turns);
    // Every key of the prefix is made; a key outside it is not.
    for (let i = 5000; i < 6000; i += 37) {
      slots.get(`${prefix}${String(i).slice(2)}`);
      expect(slots.unmade).toBe(parts - turns);
    }
    slots.get([...back.collections.get('/namespaces')!.range('', undefined)][0]);
    expect(slots.unmade).toBe(parts - turns - 1);
    await slots.makeEach('', async () => turns++);
    expect(slots.unmade).toBe(0);
    expect(turns).toBe(parts - 1);
    expect(snapshot(back)).toEqual(snapshot(viewOf(read(many()))));
  });

  it('counts the objects of parts not yet made as current: releasing buffers moves none of them, nor makes them', async () => {
    const back = await loadedFromOneBuffer(viewOf(read(many())));
    const parts = unmade(back);
    expect(back.get('/namespaces//n00001')).toBeInstanceOf(LazyObject);
    expect(await back.releaseBuffers()).toBe(0);
    expect(unmade(back)).toBe(parts - 1);
    // Replace most objects: the few left current get bytes of their own.
    for (let i = 0; i < N - 10; i++) back.apply({ seq: N + 1 + i, type: 'put', key: `/namespaces//n${String(i).padStart(5, '0')}`, value: ns(`n${i}`, N + 1 + i) });
    expect(await back.releaseBuffers()).toBe(10);
  });

  const read = (list: LogEntry[]) => list.map((e) => decodeEntry(e.seq, encodeRecord(e)));
});
