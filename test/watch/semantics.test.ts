/**
 * What a watch delivers: selectors with Kubernetes' transitions, bookmarks, sendInitialEvents and
 * its defaults, timeoutSeconds and the server's own timeout, Table events for kubectl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { MIN_REQUEST_TIMEOUT_SECONDS, watchTimeoutMs } from '../../src/http/handlers/watch.js';
import { EVENTS, createEvent, createNamespace, currentVersion, deleteEvent, labelEvent } from './objects.js';
import { HttpWatch, type WatchEvent } from './stream.js';
import { sleep } from '../helpers/poll.js';

const BOOKMARK_MS = 150;
let srv: TestServer;
let base: string;
const open: HttpWatch[] = [];
const watch = async (path: string, headers?: Record<string, string>) => {
  const w = await HttpWatch.open(base, path, headers);
  open.push(w);
  return w;
};
const brief = (events: WatchEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`.trim());

beforeAll(async () => {
  srv = await startServer({ bookmarkIntervalMs: BOOKMARK_MS });
  base = srv.url;
  for (const ns of ['sel', 'bm', 'init', 'init-2', 'tbl', 'shard']) await createNamespace(base, ns);
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

describe('selectors', () => {
  it('label selector: an object that starts matching is ADDED, one that stops matching is DELETED; live and replayed alike', async () => {
    const from = await currentVersion(base);
    const sel = encodeURIComponent('tier=gold');
    const live = await watch(`${EVENTS}/namespaces/sel/events?watch=true&resourceVersion=${from}&labelSelector=${sel}`);
    await createEvent(base, 'e1', 'sel', { tier: 'gold' }); // ADDED e1
    await createEvent(base, 'e2', 'sel', { tier: 'silver' }); // nothing
    await labelEvent(base, 'e2', { tier: 'gold' }, 'sel'); // starts matching: ADDED e2
    const stop = await labelEvent(base, 'e1', { tier: 'silver' }, 'sel'); // stops matching: DELETED e1
    await labelEvent(base, 'e2', { extra: 'x' }, 'sel'); // still matching: MODIFIED e2
    await labelEvent(base, 'e1', { extra: 'x' }, 'sel'); // still not matching: nothing
    await deleteEvent(base, 'e1', 'sel'); // not matching: nothing
    await deleteEvent(base, 'e2', 'sel'); // DELETED e2
    const want = ['ADDED e1', 'ADDED e2', 'DELETED e1', 'MODIFIED e2', 'DELETED e2'];
    expect(brief(await live.count(5))).toEqual(want);
    // The DELETED for an object that stopped matching carries its new state and version.
    expect(live.events[2].object.metadata).toMatchObject({ resourceVersion: String(stop), labels: { tier: 'silver' } });
    // The same history replayed from the log gives the same events.
    const replay = await watch(`${EVENTS}/namespaces/sel/events?watch=true&resourceVersion=${from}&labelSelector=${sel}`);
    expect(brief(await replay.count(5))).toEqual(want);
    await sleep(100);
    expect(live.events).toHaveLength(5);
    expect(replay.events).toHaveLength(5);
  });

  it('field selectors filter watch events (metadata.namespace on the all-namespaces path, a kind field, and !=)', async () => {
    const from = await currentVersion(base);
    const w = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}&fieldSelector=${encodeURIComponent('metadata.namespace=sel,reason=Watched,metadata.name!=skip')}`);
    await createEvent(base, 'other-ns', 'bm');
    await createEvent(base, 'skip', 'sel');
    await createEvent(base, 'kept', 'sel');
    expect(brief(await w.count(1))).toEqual(['ADDED kept']);
    const none = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}&fieldSelector=${encodeURIComponent('reason=Other')}`);
    await sleep(150);
    expect(none.events).toHaveLength(0);
  });

  it('an unknown field or a malformed selector is a 400 before the stream starts', async () => {
    const r1 = await call(base, 'GET', `${EVENTS}/events?watch=true&fieldSelector=${encodeURIComponent('spec.nope=1')}`);
    expect(r1.status).toBe(400);
    expect(r1.body.kind).toBe('Status');
    const r2 = await call(base, 'GET', `${EVENTS}/events?watch=true&labelSelector=${encodeURIComponent('a in (')}`);
    expect(r2.status).toBe(400);
  });
});

describe('shardSelector', () => {
  const half = (lo: string, hi: string) => encodeURIComponent(`shardRange(object.metadata.uid, '${lo}', '${hi}')`);
  const LOW = half('0x0000000000000000', '0x8000000000000000');
  const HIGH = half('0x8000000000000000', '0x10000000000000000');

  it('two halves of the hash space split the events between them: each object in exactly one, as the list splits them', async () => {
    const from = await currentVersion(base);
    const low = await watch(`${EVENTS}/namespaces/shard/events?watch=true&resourceVersion=${from}&shardSelector=${LOW}`);
    const high = await watch(`${EVENTS}/namespaces/shard/events?watch=true&resourceVersion=${from}&shardSelector=${HIGH}`);
    const all = await watch(`${EVENTS}/namespaces/shard/events?watch=true&resourceVersion=${from}`);
    const names = Array.from({ length: 16 }, (_, i) => `sh-${i}`);
    for (const n of names) await createEvent(base, n, 'shard');
    await all.count(names.length);
    await low.until((e) => e.length + high.events.length >= names.length, 'every object in one half');
    await sleep(100);
    const lowNames = low.events.map((e) => e.object.metadata.name);
    const highNames = high.events.map((e) => e.object.metadata.name);
    expect([...lowNames, ...highNames].sort()).toEqual([...names].sort());
    expect(lowNames.length).toBeGreaterThan(0);
    expect(highNames.length).toBeGreaterThan(0);
    // The same selector on a list selects the same objects.
    const listed = await call(base, 'GET', `${EVENTS}/namespaces/shard/events?shardSelector=${LOW}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((o: any) => o.metadata.name).sort()).toEqual([...lowNames].sort());
  });

  it('a malformed shardSelector is a 400 before the stream starts', async () => {
    const r = await call(base, 'GET', `${EVENTS}/events?watch=true&shardSelector=${encodeURIComponent("shardRange(object.spec.x, '0x0', '0x1')")}`);
    expect(r.status).toBe(400);
  });
});

describe('bookmarks', () => {
  it('allowWatchBookmarks=true: periodic BOOKMARKs with only kind, apiVersion and the newest applied version, even when nothing matched', async () => {
    const from = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/bm/events?watch=true&resourceVersion=${from}&allowWatchBookmarks=true&labelSelector=never%3Dmatches`);
    const first = await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'a first bookmark');
    expect(first.find((x) => x.type === 'BOOKMARK')).toEqual({ type: 'BOOKMARK', object: { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: { resourceVersion: String(from) } } });
    // Writes elsewhere (another namespace, another kind) move the version the bookmarks carry.
    await createEvent(base, 'elsewhere', 'sel');
    const newest = await createNamespace(base, 'bm-moved');
    const events = await w.until((e) => e.some((x) => x.type === 'BOOKMARK' && x.object.metadata.resourceVersion === String(newest)), `a bookmark at ${newest}`);
    expect(events.every((x) => x.type === 'BOOKMARK')).toBe(true);
    for (const b of events) expect(Object.keys(b.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    for (const b of events) expect(Object.keys(b.object.metadata)).toEqual(['resourceVersion']);
    // Versions never go backwards.
    const versions = events.map((b) => Number(b.object.metadata.resourceVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
  });

  it('without allowWatchBookmarks there are none', async () => {
    const from = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/bm/events?watch=true&resourceVersion=${from}`);
    const withBm = await watch(`${EVENTS}/namespaces/bm/events?watch=true&resourceVersion=${from}&allowWatchBookmarks=True`);
    await withBm.until((e) => e.filter((x) => x.type === 'BOOKMARK').length >= 3, 'three bookmarks');
    expect(w.events).toHaveLength(0);
  });
});

describe('sendInitialEvents (streaming list)', () => {
  it('synthetic ADDED events for the current state, one annotated BOOKMARK, then changes', async () => {
    for (const n of ['c', 'a', 'b']) await createEvent(base, n, 'init');
    await deleteEvent(base, 'b', 'init');
    const at = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/init/events?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    const initial = await w.count(3);
    expect(brief(initial)).toEqual(['ADDED a', 'ADDED c', 'BOOKMARK']);
    expect(initial[2].object).toEqual({
      kind: 'Event',
      apiVersion: 'events.orch.io/v1',
      metadata: { resourceVersion: String(at), annotations: { 'orch.io/initial-events-end': 'true' } },
    });
    await createEvent(base, 'd', 'init');
    await deleteEvent(base, 'a', 'init');
    const later = await w.until((e) => e.filter((x) => x.type !== 'BOOKMARK').length >= 4, 'two changes');
    expect(brief(later.filter((x) => x.type !== 'BOOKMARK')).slice(2)).toEqual(['ADDED d', 'DELETED a']);
    // Only the first bookmark carries the end marker.
    expect(later.filter((x) => x.object.metadata?.annotations?.['orch.io/initial-events-end']).length).toBe(1);
  });

  it('with resourceVersion=N it serves a state at least as new as N, waiting for it', async () => {
    const head = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/init-2/events?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${head + 1}`);
    await sleep(100);
    expect(w.events).toHaveLength(0);
    const v = await createEvent(base, 'late', 'init-2');
    expect(v).toBe(head + 1);
    const events = await w.count(2);
    expect(brief(events)).toEqual(['ADDED late', 'BOOKMARK']);
    expect(Number(events[1].object.metadata.resourceVersion)).toBeGreaterThanOrEqual(head + 1);
  });

  it('a version the server does not reach in time is an ERROR 504 Timeout (ResourceVersionTooLarge)', async () => {
    const head = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/init-2/events?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${head + 1000}`);
    const [e] = await w.count(1, 10_000);
    expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 504, reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } } });
    await w.ended();
  });

  it('sendInitialEvents with resourceVersionMatch unset or not NotOlderThan is Invalid; so is resourceVersionMatch alone', async () => {
    for (const q of ['sendInitialEvents=true', 'sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1', 'sendInitialEvents=false', 'resourceVersionMatch=NotOlderThan']) {
      const r = await call(base, 'GET', `${EVENTS}/events?watch=true&${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body, q).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    }
  });

  it('rv unset or "0" defaults to sendInitialEvents: the current state first (end bookmark only when bookmarks are allowed)', async () => {
    const plain = await watch(`${EVENTS}/namespaces/init/events?watch=true`);
    const zero = await watch(`${EVENTS}/namespaces/init/events?watch=true&resourceVersion=0`);
    const withBm = await watch(`${EVENTS}/namespaces/init/events?watch=true&allowWatchBookmarks=true`);
    const state = ['ADDED c', 'ADDED d'];
    expect(brief(await plain.count(2))).toEqual(state);
    expect(brief(await zero.count(2))).toEqual(state);
    const bm = await withBm.count(3);
    expect(brief(bm)).toEqual([...state, 'BOOKMARK']);
    expect(bm[2].object.metadata.annotations).toEqual({ 'orch.io/initial-events-end': 'true' });
    await createEvent(base, 'e', 'init');
    expect(brief(await plain.count(3))).toEqual([...state, 'ADDED e']);
    expect(plain.events.some((x) => x.type === 'BOOKMARK')).toBe(false);
  });

  it('sendInitialEvents=false with NotOlderThan and rv "0" starts from now, with no initial state', async () => {
    const w = await watch(`${EVENTS}/namespaces/init/events?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=0`);
    await sleep(50);
    await createEvent(base, 'f', 'init');
    expect(brief(await w.count(1))).toEqual(['ADDED f']);
  });
});

describe('timeouts', () => {
  it('timeoutSeconds ends the stream cleanly: the response ends, no ERROR', async () => {
    const from = await currentVersion(base);
    const started = Date.now();
    const w = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}&timeoutSeconds=1`);
    await w.ended(10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    expect(w.res.complete).toBe(true); // the chunked body was terminated properly, not cut
  });

  it('timeoutSeconds=0 or absent means the server default, and a huge one is honoured, not an immediate end', async () => {
    const from = await currentVersion(base);
    const zero = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}&timeoutSeconds=0`);
    const none = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}`);
    // Longer than a timer can hold (2^31 ms): capped, not wrapped around to an immediate end.
    const huge = await watch(`${EVENTS}/events?watch=true&resourceVersion=${from}&timeoutSeconds=4000000`);
    await sleep(1200);
    expect(zero.closed).toBe(false);
    expect(none.closed).toBe(false);
    expect(huge.closed).toBe(false);
    const v = await createEvent(base, 'still-open', 'bm');
    await zero.until((e) => e.some((x) => x.object.metadata.resourceVersion === String(v)), 'the event');
  });

  it('the server-side default is randomized in [minRequestTimeout, 2·minRequestTimeout), as in Kubernetes', () => {
    expect(MIN_REQUEST_TIMEOUT_SECONDS).toBe(1800);
    expect(watchTimeoutMs(undefined, () => 0)).toBe(1800_000);
    expect(watchTimeoutMs(undefined, () => 0.999)).toBeCloseTo(3598_200, -2);
    expect(watchTimeoutMs(0, () => 0.5)).toBe(2700_000);
    expect(watchTimeoutMs(7)).toBe(7000);
    const draws = Array.from({ length: 50 }, () => watchTimeoutMs(undefined));
    for (const d of draws) expect(d >= 1800_000 && d < 3600_000).toBe(true);
    expect(new Set(draws).size).toBeGreaterThan(40);
  });
});

describe('Table watches (kubectl get -w)', () => {
  const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

  it('each event carries a one-row Table; column definitions come with the first only', async () => {
    const from = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/tbl/events?watch=true&resourceVersion=${from}`, { Accept: TABLE });
    const v1 = await createEvent(base, 't1', 'tbl');
    await labelEvent(base, 't1', { a: 'b' }, 'tbl');
    await deleteEvent(base, 't1', 'tbl');
    const events = await w.count(3);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    for (const e of events) {
      expect(e.object).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(e.object.rows).toHaveLength(1);
      expect(e.object.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 't1', namespace: 'tbl' } });
    }
    expect(events[0].object.metadata.resourceVersion).toBe(String(v1));
    expect(events[0].object.columnDefinitions.length).toBeGreaterThan(0);
    expect(events[1].object.columnDefinitions).toEqual([]);
    expect(events[2].object.columnDefinitions).toEqual([]);
  });

  it('an ERROR stays a Status in a Table watch', async () => {
    await createEvent(base, 't2', 'tbl');
    await srv.store.compact(await currentVersion(base));
    const w = await watch(`${EVENTS}/namespaces/tbl/events?watch=true&resourceVersion=1`, { Accept: TABLE });
    const [e] = await w.count(1);
    expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410 } });
  });

  it('includeObject=Object puts the whole object in the row; a bad includeObject is a 400 before streaming', async () => {
    const from = await currentVersion(base);
    const w = await watch(`${EVENTS}/namespaces/tbl/events?watch=true&resourceVersion=${from}&includeObject=Object`, { Accept: TABLE });
    await createEvent(base, 't3', 'tbl');
    const [e] = await w.count(1);
    expect(e.object.rows[0].object).toMatchObject({ kind: 'Event', apiVersion: 'events.orch.io/v1', reason: 'Watched' });
    const bad = await call(base, 'GET', `${EVENTS}/namespaces/tbl/events?watch=true&includeObject=Everything`, undefined, { Accept: TABLE });
    expect(bad.status).toBe(400);
  });
});
