/**
 * The watch engine (src/store/watch.ts) on a real Store over a real LevelDB log, without HTTP: the
 * watcher's connection is a WatchFlow the test controls (how much is unsent), so falling behind,
 * draining and stalling can be made to happen exactly.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { KubeObject } from '../../src/api/types.js';
import type { WatchRoute } from '../../src/store/fanout.js';
import { Store } from '../../src/store/store.js';
import { watch$, WatchError, type WatchEvent, type WatchFlow, type WatchRequest } from '../../src/store/watch.js';
import { tempStore } from '../helpers/temp-store.js';
import { eventually, sleep } from '../helpers/poll.js';
import { rng } from '../helpers/rng.js';

const C = 'test.orch.io/things';
let log: LevelDbLog;
let store: Store;
const subs: Subscription[] = [];

beforeAll(async () => {
  ({ log, store } = await tempStore('orchd-watch-engine-'));
});
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
});
afterAll(async () => {
  await store?.close();
  await log?.close();
});

const thing = (ns: string, name: string, labels: Record<string, string> = {}, kind = 'a'): KubeObject => ({
  apiVersion: 'test.orch.io/v1',
  kind: 'Thing',
  metadata: { name, namespace: ns, labels },
  spec: { kind },
});
const keyOf = (ns: string, name: string) => `${C}/${ns}/${name}`;
/** Whatever the key holds now (pending writes included) is what the write expects: a create or a replace. */
const upsert = (key: string, obj: KubeObject) => {
  const cur = store.latest(key);
  return store.put(key, obj, cur ? { seq: cur.seq } : 'absent');
};
const put = async (ns: string, name: string, labels: Record<string, string> = {}, kind = 'a') => (await upsert(keyOf(ns, name), thing(ns, name, labels, kind))).seq;

/** A connection that takes everything unless told otherwise. */
class TestFlow implements WatchFlow {
  unsent = 0;
  highWater = 100;
  bound = 1000;
  private waiters: (() => void)[] = [];
  needsDrain = () => this.unsent > this.highWater;
  behind = () => this.unsent > this.bound;
  drained = () => (this.needsDrain() ? new Promise<void>((r) => this.waiters.push(r)) : Promise.resolve());
  drain(): void {
    this.unsent = 0;
    for (const w of this.waiters.splice(0)) w();
  }
}

interface Seen {
  events: WatchEvent[];
  batches: number;
  error?: unknown;
  done: boolean;
}

function watch(req: Partial<WatchRequest> & { after?: number }, flow: WatchFlow = new TestFlow(), onBatch?: (events: WatchEvent[]) => void): Seen {
  const seen: Seen = { events: [], batches: 0, done: false };
  const full: WatchRequest = {
    collection: C,
    keyPrefix: `${C}/`,
    route: { by: 'scan' },
    initialEventsEnd: false,
    timeoutMs: 60_000,
    stallTimeoutMs: 60_000,
    current: () => store.list(C),
    ...req,
  };
  subs.push(
    watch$(store, full, flow).subscribe({
      next: (events) => {
        seen.batches++;
        seen.events.push(...events);
        onBatch?.(events);
      },
      error: (err: unknown) => {
        seen.error = err;
        seen.done = true;
      },
      complete: () => (seen.done = true),
    }),
  );
  return seen;
}

const until = (cond: () => boolean, what: string, ms = 30_000) => eventually(cond, { timeoutMs: ms, stepMs: 5, what });

/** An event as [type, name, version]: what a client sees. */
const brief = (e: WatchEvent): [string, string, number] =>
  e.type === 'BOOKMARK' ? ['BOOKMARK', '', e.seq] : 'initial' in e ? ['ADDED', e.initial.obj.metadata.name!, e.initial.seq] : [e.type, e.change.cur.obj.metadata.name!, e.change.seq];

interface Write {
  seq: number;
  key: string;
  type: 'put' | 'delete';
  obj: KubeObject;
}

/** The reference: what a watcher from `after` with selector m must see, from the writes alone. */
function reference(writes: Write[], after: number, prefix: string, m: (o: KubeObject) => boolean = () => true): [string, string, number][] {
  const state = new Map<string, KubeObject>();
  const out: [string, string, number][] = [];
  for (const w of writes) {
    const prev = state.get(w.key);
    if (w.type === 'put') state.set(w.key, w.obj);
    else state.delete(w.key);
    if (w.seq <= after || !w.key.startsWith(prefix)) continue;
    const before = prev !== undefined && m(prev);
    const now = w.type === 'put' && m(w.obj);
    const type = w.type === 'delete' ? (before ? 'DELETED' : undefined) : now ? (before ? 'MODIFIED' : 'ADDED') : before ? 'DELETED' : undefined;
    if (type) out.push([type, w.obj.metadata.name!, w.seq]);
  }
  return out;
}

/** Random creates, label changes, moves between kinds and deletes over a few namespaces; returns every write. */
async function randomWrites(tag: string, n: number, seed: number, onWrite?: (seq: number) => void): Promise<Write[]> {
  const rand = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const writes: Write[] = [];
  const live = new Set<string>();
  const batch: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    // Namespaces of the test's own, empty before it: the reference starts from nothing.
    const ns = `${tag}-${pick(['a', 'b', 'c'])}`;
    const name = `t${Math.floor(rand() * 12)}`;
    const key = keyOf(ns, name);
    const labels: Record<string, string> = {};
    if (rand() < 0.7) labels.app = pick(['web', 'db', 'cache']);
    if (rand() < 0.5) labels.tier = pick(['front', 'back']);
    const obj = thing(ns, name, labels, pick(['a', 'b']));
    const remove = live.has(key) && rand() < 0.25;
    if (remove) live.delete(key);
    else live.add(key);
    // Several writes per commit batch, as concurrent requests make them.
    batch.push(
      (remove ? store.remove(key, obj, 'any') : upsert(key, obj)).then((s) => {
        writes.push({ seq: s.seq, key, type: remove ? 'delete' : 'put', obj: structuredClone(obj) });
        onWrite?.(s.seq);
      }),
    );
    if (batch.length >= 1 + Math.floor(rand() * 6)) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  return writes.sort((a, b) => a.seq - b.seq);
}

describe('changes after a version', () => {
  it('join the log and live changes with no gap and no duplicate, from versions old and new, under concurrent writes', async () => {
    const start = store.appliedSeq;
    const watchers: { after: number; seen: Seen }[] = [];
    const open = (after: number) => watchers.push({ after, seen: watch({ after, keyPrefix: `${C}/join-a/` }) });
    open(start);
    let n = 0;
    const writes = await randomWrites('join', 200, 1, (seq) => {
      if (++n % 20 === 0) {
        open(seq);
        open(Math.max(start, seq - 30));
      }
    });
    for (const { after, seen } of watchers) {
      const want = reference(writes, after, `${C}/join-a/`);
      await until(() => seen.events.length >= want.length, `from ${after}`);
      expect(seen.events.map(brief), `from ${after}`).toEqual(want);
    }
  });

  it('turn into ADDED and DELETED as objects enter and leave the selector, live and replayed alike', async () => {
    const start = store.appliedSeq;
    const m = (o: KubeObject) => o.metadata.labels?.app === 'web';
    const live = watch({ after: start, matches: m, keyPrefix: `${C}/sel-` });
    const writes = await randomWrites('sel', 120, 2);
    const replayed = watch({ after: start, matches: m, keyPrefix: `${C}/sel-` });
    const want = reference(writes, start, `${C}/sel-`, m);
    expect(want.some((e) => e[0] === 'DELETED') && want.some((e) => e[0] === 'ADDED')).toBe(true);
    for (const seen of [live, replayed]) {
      await until(() => seen.events.length >= want.length, 'the selected changes');
      expect(seen.events.map(brief)).toEqual(want);
    }
  });

  it('from a version past the compaction horizon end with COMPACTED', async () => {
    await put('ns-z', 'c1');
    await put('ns-z', 'c2');
    const c = await store.compact(store.appliedSeq);
    expect(c.horizon).toBeGreaterThan(2);
    const seen = watch({ after: 1 });
    await until(() => seen.done, 'the end');
    expect(seen.error).toMatchObject({ code: 'COMPACTED' });
  });
});

describe('the index of live watchers', () => {
  it('hands an indexed watcher exactly what a scanned one with the same selector gets, on a random write stream', async () => {
    const start = store.appliedSeq;
    const cases: { route: WatchRoute; prefix: string; m?: (o: KubeObject) => boolean }[] = [
      { route: { by: 'namespace', namespace: 'ix-b' }, prefix: `${C}/ix-b/` },
      { route: { by: 'label', key: 'app', value: 'db' }, prefix: `${C}/ix-`, m: (o) => o.metadata.labels?.app === 'db' },
      { route: { by: 'label', key: 'tier', value: 'front' }, prefix: `${C}/ix-c/`, m: (o) => o.metadata.labels?.tier === 'front' && o.metadata.labels?.app !== 'web' },
      { route: { by: 'field', path: 'spec.kind', value: 'b', get: (o) => (o as any).spec.kind }, prefix: `${C}/ix-`, m: (o) => (o as any).spec.kind === 'b' },
      { route: { by: 'field', path: 'metadata.name', value: 't3', get: (o) => o.metadata.name! }, prefix: `${C}/ix-a/`, m: (o) => o.metadata.name === 't3' },
    ];
    const pairs = cases.map((c) => ({
      c,
      indexed: watch({ after: start, route: c.route, keyPrefix: c.prefix, ...(c.m ? { matches: c.m } : {}) }),
      scanned: watch({ after: start, route: { by: 'scan' }, keyPrefix: c.prefix, ...(c.m ? { matches: c.m } : {}) }),
    }));
    const writes = await randomWrites('ix', 300, 3);
    for (const { c, indexed, scanned } of pairs) {
      const want = reference(writes, start, c.prefix, c.m);
      expect(want.length, JSON.stringify(c.route)).toBeGreaterThan(0);
      await until(() => indexed.events.length >= want.length && scanned.events.length >= want.length, JSON.stringify(c.route));
      expect(indexed.events.map(brief), JSON.stringify(c.route)).toEqual(want);
      expect(scanned.events.map(brief)).toEqual(want);
    }
  });

  it('asks only the watchers a change can concern, and hands each the changes of a commit batch at once', async () => {
    const start = store.appliedSeq;
    const batches: WatchEvent[][] = [];
    const mine = watch({ after: start, route: { by: 'namespace', namespace: 'ns-one' }, keyPrefix: `${C}/ns-one/` }, new TestFlow(), (b) => batches.push(b));
    const others = Array.from({ length: 50 }, (_, i) => watch({ after: start, route: { by: 'namespace', namespace: `other-${i}` }, keyPrefix: `${C}/other-${i}/` }));
    // One commit batch: three writes of this turn of the event loop.
    await Promise.all([put('ns-one', 'a'), put('ns-one', 'b'), put('ns-two', 'c'), put('ns-one', 'd')]);
    await until(() => mine.events.length === 3, 'three events');
    expect(batches).toHaveLength(1);
    expect(others.every((o) => o.batches === 0)).toBe(true);
  });
});

describe('the initial state', () => {
  it('is the current objects as ADDED, then the end bookmark, then what changed meanwhile, read back from the log', async () => {
    const flow = new TestFlow();
    flow.highWater = 10;
    for (let i = 0; i < 150; i++) await put('ns-init', `i${String(i).padStart(3, '0')}`);
    const at = store.appliedSeq;
    // The connection is full after the first chunk: the rest waits for it to drain.
    const seen = watch({ keyPrefix: `${C}/ns-init/`, current: () => store.list(C, 'ns-init/'), initialEventsEnd: true, bookmarkIntervalMs: 60_000 }, flow, (b) => (flow.unsent += b.length));
    await until(() => seen.events.length > 0, 'the first chunk');
    const first = seen.events.length;
    expect(first).toBeLessThan(150);
    // A watcher that is not held back is handed the next write: the held one is handed nothing.
    const healthy = watch({ after: at, keyPrefix: `${C}/ns-init/` });
    const during = await put('ns-init', 'z-during');
    await until(() => healthy.events.length === 1, 'the write, to a watcher not held back');
    expect(seen.events.length).toBe(first);
    const drainAll = setInterval(() => flow.drain(), 2);
    try {
      await until(() => seen.events.length === 152, 'every event');
    } finally {
      clearInterval(drainAll);
    }
    expect(seen.events.slice(0, 150).map((e) => brief(e)[0])).toEqual(Array(150).fill('ADDED'));
    expect(seen.events[150]).toEqual({ type: 'BOOKMARK', seq: at, initialEventsEnd: true });
    expect(brief(seen.events[151])).toEqual(['ADDED', 'z-during', during]);
  });

  it('filters by the selector', async () => {
    await put('ns-sel', 'x', { app: 'web' });
    await put('ns-sel', 'y', { app: 'db' });
    const seen = watch({ keyPrefix: `${C}/ns-sel/`, current: () => store.list(C, 'ns-sel/'), matches: (o) => o.metadata.labels?.app === 'db' });
    await until(() => seen.events.length === 1, 'one event');
    expect(brief(seen.events[0]).slice(0, 2)).toEqual(['ADDED', 'y']);
  });
});

describe('bookmarks and the timeout', () => {
  it('bookmarks carry the newest version passed, even when nothing matched; the timeout ends the watch', async () => {
    const start = store.appliedSeq;
    const seen = watch({ after: start, keyPrefix: `${C}/ns-quiet/`, bookmarkIntervalMs: 40, timeoutMs: 400 });
    const other = await put('ns-loud', 'x');
    await until(() => seen.events.some((e) => e.type === 'BOOKMARK' && e.seq >= other), 'a bookmark at the write');
    expect(seen.events.every((e) => e.type === 'BOOKMARK')).toBe(true);
    await until(() => seen.done, 'the timeout');
    expect(seen.error).toBeUndefined();
  });
});

describe('a watcher whose connection falls behind', () => {
  it('stops taking live changes past the bound, then catches up from the log a page at a time as it drains, missing nothing', async () => {
    const flow = new TestFlow();
    flow.bound = 5;
    flow.highWater = 2;
    const start = store.appliedSeq;
    const seen = watch({ after: start, keyPrefix: `${C}/ns-slow/` }, flow, (b) => (flow.unsent += b.length));
    const healthy = watch({ after: start, keyPrefix: `${C}/ns-slow/` });
    const seqs: number[] = [];
    for (let i = 0; i < 40; i += 4) seqs.push(...(await Promise.all([0, 1, 2, 3].map((j) => put('ns-slow', `s${i + j}`)))));
    seqs.sort((a, b) => a - b);
    await until(() => healthy.events.length === 40, 'the healthy watcher');
    // It took live changes until it was past its bound, then nothing more while not drained.
    expect(seen.events.length).toBeLessThan(20);
    const got = seen.events.length;
    seqs.push(await put('ns-slow', 'z-marker'));
    await until(() => healthy.events.length === 41, 'the marker, to the healthy watcher');
    expect(seen.events.length).toBe(got);
    // Draining lets it read on from the log, each page only once the previous one drained.
    const drainAll = setInterval(() => flow.drain(), 2);
    let after: number;
    try {
      await until(() => seen.events.length === 41, 'the catch-up');
      after = await put('ns-slow', 'after');
      await until(() => seen.events.length === 42, 'live again');
    } finally {
      clearInterval(drainAll);
    }
    expect(seen.events.map((e) => brief(e)[2])).toEqual([...seqs, after]);
  });

  it('catching up together, take turns page by page, and each is handed every change in order', async () => {
    const start = store.appliedSeq;
    const seqs: number[] = [];
    for (let i = 0; i < 600; i += 20) seqs.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => put('ns-hist', `h${i + j}`)))));
    seqs.sort((a, b) => a - b);
    let mostWaiting = 0;
    const watchers = Array.from({ length: 10 }, () =>
      watch({ after: start, keyPrefix: `${C}/ns-hist/` }, new TestFlow(), () => (mostWaiting = Math.max(mostWaiting, store.streams.catchUpTurns.waiting))),
    );
    await until(() => watchers.every((w) => w.events.length === seqs.length), 'every catch-up');
    for (const w of watchers) expect(w.events.map((e) => brief(e)[2])).toEqual(seqs);
    // The other nine were queued behind the one whose page was being sent.
    expect(mostWaiting).toBe(9);
  });

  it('is ended with STALLED, carrying the last version it was handed, when it does not drain within the stall timeout', async () => {
    const flow = new TestFlow();
    flow.bound = 3;
    const start = store.appliedSeq;
    const seen = watch({ after: start, keyPrefix: `${C}/ns-stall/`, stallTimeoutMs: 300 }, flow, (b) => (flow.unsent += b.length * 50));
    // Writes go on until it is ended (at most 60): a watcher is found behind by the changes that reach it.
    for (let i = 0; i < 60 && !seen.done; i++) {
      await put('ns-stall', `s${i}`);
      await sleep(20);
    }
    await until(() => seen.done, 'the end', 5000);
    expect(seen.error).toBeInstanceOf(WatchError);
    const err = seen.error as WatchError;
    expect(err.code).toBe('STALLED');
    expect(err.seq).toBe(brief(seen.events.at(-1)!)[2]);
  });
});

describe('commits', () => {
  it('reach watchers in the store’s own async context, not that of the request whose write started the batch', async () => {
    const als = new AsyncLocalStorage<string>();
    const contexts: (string | undefined)[] = [];
    const sub = store.streams.of(C).subscribe(() => contexts.push(als.getStore()));
    await als.run('request-1', () => put('ns-ctx', 'x'));
    sub.unsubscribe();
    expect(contexts).toEqual([undefined]);
  });
});
