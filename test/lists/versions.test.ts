import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { createEvent, createNamespace, EVENTS, inBatches, listAll, names, startListServer, type ListServer } from './server.js';
import { sleep } from '../helpers/poll.js';

let s: ListServer;
let base: string;
const NS = `${EVENTS}/namespaces/tt/events`;

/** The cluster as it was after each step: [resourceVersion, the list of tt's Events at that moment]. */
const history: [number, any[]][] = [];

async function snapshot(): Promise<void> {
  const r = await call(base, 'GET', NS);
  history.push([Number(r.body.metadata.resourceVersion), r.body.items]);
}

async function relabel(name: string, labels: Record<string, string>): Promise<any> {
  const got = await call(base, 'GET', `${NS}/${name}`);
  got.body.metadata.labels = labels;
  const r = await call(base, 'PUT', `${NS}/${name}`, got.body);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

beforeAll(async () => {
  s = await startListServer();
  base = s.url;
  await createNamespace(base, 'tt');
  await snapshot();
  for (let i = 0; i < 12; i++) {
    await createEvent(base, `e${String(i).padStart(2, '0')}`, 'tt', { labels: { color: i % 2 ? 'red' : 'blue' } });
    if (i % 3 === 2) await snapshot();
  }
  await relabel('e01', { color: 'blue' });
  await snapshot();
  expect((await call(base, 'DELETE', `${NS}/e04`)).status).toBe(200);
  await snapshot();
  await relabel('e01', { color: 'green' });
  await createEvent(base, 'e04', 'tt', { labels: { color: 'red' } });
  await snapshot();
}, 60_000);

afterAll(async () => {
  await s?.cleanup();
});

describe('resourceVersionMatch=Exact: time travel', () => {
  it('a whole list at every past version is the list as it was then', async () => {
    for (const [rv, items] of history) {
      const r = await call(base, 'GET', `${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.metadata.resourceVersion).toBe(String(rv));
      expect(JSON.stringify(r.body.items)).toBe(JSON.stringify(items));
    }
  });

  it('with selectors and pages, every page at the same past version', async () => {
    for (const [rv, items] of history) {
      const blue = items.filter((o) => o.metadata.labels?.color === 'blue');
      const { items: paged, metas } = await listAll(base, `${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact&labelSelector=color%3Dblue`, 2);
      expect(names(paged)).toEqual(names(blue));
      expect(JSON.stringify(paged)).toBe(JSON.stringify(blue));
      expect(metas.every((m) => m.resourceVersion === String(rv))).toBe(true);
    }
  });

  it('unfiltered Exact pages count what remains at that version', async () => {
    const [rv, items] = history[2];
    const { metas } = await listAll(base, `${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`, 2);
    expect(metas[0].remainingItemCount).toBe(items.length - 2);
    if (metas.length > 2) expect(metas[1].remainingItemCount).toBe(items.length - 4);
  });

  it('a legacy list with a limit and a resourceVersion but no match is Exact, as in Kubernetes', async () => {
    const [rv, items] = history[1];
    const r = await call(base, 'GET', `${NS}?resourceVersion=${rv}&limit=100`);
    expect(r.body.metadata.resourceVersion).toBe(String(rv));
    expect(names(r.body.items)).toEqual(names(items));
  });

  it('one object at a past version; absent then is a 404', async () => {
    for (const [rv, items] of history) {
      for (const name of ['e01', 'e04', 'e11']) {
        const want = items.find((o) => o.metadata.name === name);
        const r = await call(base, 'GET', `${NS}/${name}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
        if (want) {
          expect(r.status).toBe(200);
          expect(JSON.stringify(r.body)).toBe(JSON.stringify(want));
        } else expect(r.status).toBe(404);
      }
    }
  });

  it('a future version is Kubernetes\' 504 "Too large resource version" at once, with no retry hint', async () => {
    const rv = history.at(-1)![0] + 1000;
    for (const path of [`${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`, `${NS}/e01?resourceVersion=${rv}&resourceVersionMatch=Exact`]) {
      const r = await call(base, 'GET', path);
      expect(r.status).toBe(504);
      expect(r.body).toMatchObject({ reason: 'Timeout', message: `Timeout: Too large resource version: ${rv}, current: ${history.at(-1)![0]}` });
      expect(r.body.details.causes).toEqual([{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
      expect(r.headers.get('retry-after')).toBeNull();
    }
  });
});

describe('resourceVersion unset, 0 and NotOlderThan', () => {
  it('unset and 0 read the newest state; NotOlderThan an old version reads the newest too', async () => {
    const [newest, items] = history.at(-1)!;
    for (const q of [
      '',
      '?resourceVersion=0',
      '?resourceVersion=0&resourceVersionMatch=NotOlderThan',
      `?resourceVersion=${history[0][0]}&resourceVersionMatch=NotOlderThan`,
      `?resourceVersion=${history[0][0]}`,
    ]) {
      const r = await call(base, 'GET', `${NS}${q}`);
      expect(r.status, q).toBe(200);
      expect(r.body.metadata.resourceVersion).toBe(String(newest));
      expect(names(r.body.items)).toEqual(names(items));
    }
    const one = await call(base, 'GET', `${NS}/e01?resourceVersion=${history[0][0]}`);
    expect(one.body.metadata.labels).toEqual({ color: 'green' });
  });

  it('NotOlderThan a version not reached waits for it', async () => {
    const next = history.at(-1)![0] + 1;
    const waiting = call(base, 'GET', `${NS}?resourceVersion=${next}&resourceVersionMatch=NotOlderThan`);
    const waitingGet = call(base, 'GET', `${NS}/e02?resourceVersion=${next}`);
    await sleep(100);
    await createEvent(base, 'late', 'tt');
    const [r, g] = await Promise.all([waiting, waitingGet]);
    expect(r.status).toBe(200);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(next);
    expect(r.body.items.map((o: any) => o.metadata.name)).toContain('late');
    expect(g.status).toBe(200);
  });

  it('NotOlderThan a version that never comes: after a brief wait, 504 with Retry-After as Kubernetes', async () => {
    const far = history.at(-1)![0] + 100_000;
    const r = await call(base, 'GET', `${NS}?resourceVersion=${far}&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(504);
    expect(r.body.message).toMatch(new RegExp(`^Timeout: Too large resource version: ${far}, current: \\d+$`));
    expect(r.body.details).toMatchObject({ retryAfterSeconds: 1, causes: [{ reason: 'ResourceVersionTooLarge' }] });
    expect(r.headers.get('retry-after')).toBe('1');
  }, 15_000);

  it.each([
    ['match without resourceVersion', '?resourceVersionMatch=Exact', 422, 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ['Exact with 0', '?resourceVersion=0&resourceVersionMatch=Exact', 422, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
    ['unknown match', '?resourceVersion=5&resourceVersionMatch=Newest', 422, 'Unsupported value: "Newest"'],
    ['version that is no number', '?resourceVersion=abc', 400, 'invalid resource version'],
  ])('%s is refused', async (_n, q, code, message) => {
    const r = await call(base, 'GET', `${NS}${q}`);
    expect(r.status).toBe(code);
    expect(r.body.message).toContain(message);
  });
});

describe('Exact lists larger than one read chunk', () => {
  const BIG = `${EVENTS}/namespaces/big/events`;
  let rv = 0;
  let then: any[] = [];

  beforeAll(async () => {
    await createNamespace(base, 'big');
    // 300 objects (more than the 128 old revisions a past read resolves at once), every one changed
    // afterwards, so each is read from the log; a third of them labelled for a filtered read.
    // 16 writes at a time: the log commits them together, where one at a time waited for a commit each.
    const numbers = Array.from({ length: 300 }, (_, i) => i);
    await inBatches(numbers, 16, (i) => createEvent(base, `b${String(i).padStart(3, '0')}`, 'big', { labels: { pick: i % 3 === 0 ? 'yes' : 'no' } }));
    const r = await call(base, 'GET', BIG);
    rv = Number(r.body.metadata.resourceVersion);
    then = r.body.items;
    await inBatches(then, 16, async (o) => {
      const got = await call(base, 'GET', `${BIG}/${o.metadata.name}`);
      got.body.metadata.labels = { pick: 'changed' };
      expect((await call(base, 'PUT', `${BIG}/${o.metadata.name}`, got.body)).status).toBe(200);
    });
  }, 120_000);

  it('unfiltered pages across chunk boundaries are the list as it was, with continue exactly when more remains', async () => {
    const { items, metas } = await listAll(base, `${BIG}?resourceVersion=${rv}&resourceVersionMatch=Exact`, 130);
    expect(JSON.stringify(items)).toBe(JSON.stringify(then));
    expect(metas.map((m) => m.remainingItemCount)).toEqual([170, 40, undefined]);
    expect(metas.map((m) => m.continue !== undefined)).toEqual([true, true, false]);
  });

  it('filtered pages across chunk boundaries hold every match once, in order', async () => {
    const picked = then.filter((o) => o.metadata.labels.pick === 'yes');
    const { items } = await listAll(base, `${BIG}?resourceVersion=${rv}&resourceVersionMatch=Exact&labelSelector=pick%3Dyes`, 45);
    expect(names(items)).toEqual(names(picked));
    expect(JSON.stringify(items)).toBe(JSON.stringify(picked));
  });
});
