import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { createEvent, createNamespace, EVENTS, inBatches, listAll, names, startListServer, type ListServer } from './server.js';

let s: ListServer;
let base: string;
const N = 60;

beforeAll(async () => {
  s = await startListServer();
  base = s.url;
  await createNamespace(base, 'pages');
  await inBatches(
    Array.from({ length: N }, (_, i) => i),
    30,
    (i) => createEvent(base, `p-${String(i).padStart(3, '0')}`, 'pages', { labels: { even: String(i % 2 === 0), i: String(i) } }),
  );
}, 60_000);

afterAll(async () => {
  await s?.cleanup();
});

const PAGES = `${EVENTS}/namespaces/pages/events`;

describe('limit and continue', () => {
  it('pages form a consistent snapshot of the first page, whatever is written meanwhile', async () => {
    const first = await call(base, 'GET', `${PAGES}?limit=7`);
    expect(first.status).toBe(200);
    const snapshot = await call(base, 'GET', PAGES);
    const rv = first.body.metadata.resourceVersion;
    expect(snapshot.body.metadata.resourceVersion).toBe(rv);
    const items = [...first.body.items];
    let token = first.body.metadata.continue as string | undefined;
    let writes = 0;
    while (token) {
      // Between every two pages: a create, an update and a delete, before and after the cursor.
      await createEvent(base, `p-new-${writes}`, 'pages');
      const victim = `p-${String(59 - writes).padStart(3, '0')}`;
      expect((await call(base, 'DELETE', `${PAGES}/${victim}`)).status).toBe(200);
      const upd = await call(base, 'GET', `${PAGES}/p-${String(writes).padStart(3, '0')}`);
      upd.body.metadata.labels = { ...upd.body.metadata.labels, changed: 'yes' };
      expect((await call(base, 'PUT', `${PAGES}/${upd.body.metadata.name}`, upd.body)).status).toBe(200);
      writes++;
      const page = await call(base, 'GET', `${PAGES}?limit=7&continue=${encodeURIComponent(token)}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.metadata.resourceVersion).toBe(rv);
      items.push(...page.body.items);
      token = page.body.metadata.continue;
    }
    expect(writes).toBeGreaterThan(3);
    expect(JSON.stringify(items)).toBe(JSON.stringify(snapshot.body.items));
  });

  it('continue is present exactly when more remains; remainingItemCount counts what is left (unfiltered only)', async () => {
    const total = (await call(base, 'GET', PAGES)).body.items.length;
    const { items, metas } = await listAll(base, PAGES, 10);
    expect(items.length).toBe(total);
    let seen = 0;
    for (const [i, m] of metas.entries()) {
      const last = i === metas.length - 1;
      seen += last ? total - seen : 10;
      expect(m.continue === undefined).toBe(last);
      if (last) expect(m.remainingItemCount).toBeUndefined();
      else expect(m.remainingItemCount).toBe(total - seen);
    }
    // A limit equal to the size: one page, nothing more, no token.
    const exact = await call(base, 'GET', `${PAGES}?limit=${total}`);
    expect(exact.body.items.length).toBe(total);
    expect(exact.body.metadata.continue).toBeUndefined();
    // Filtered: no count, and no token on a page after which nothing matches.
    const filtered = await listAll(base, `${PAGES}?labelSelector=even%3Dtrue`, 4);
    expect(filtered.metas.every((m) => m.remainingItemCount === undefined)).toBe(true);
    expect(filtered.metas.at(-1)!.continue).toBeUndefined();
    expect(filtered.metas.slice(0, -1).every((m) => m.continue && m.remainingItemCount === undefined)).toBe(true);
    const last = await call(base, 'GET', `${PAGES}?labelSelector=i%3D0&limit=1`);
    expect(last.body.items.map((o: any) => o.metadata.name)).toEqual(['p-000']);
    expect(last.body.metadata.continue).toBeUndefined();
  });

  it('a token is opaque and tamper-checked: edited, forged or used with another query it is a 400', async () => {
    const page = await call(base, 'GET', `${PAGES}?limit=5&labelSelector=even%3Dtrue`);
    const token: string = page.body.metadata.continue;
    expect(token).toBeTruthy();
    const [body, mac] = token.split('.');
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...decoded, start: 'pages/p-050' })).toString('base64url') + '.' + mac;
    const kube = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 'pages/p-050' })).toString('base64url');
    for (const [path, why] of [
      [`${PAGES}?limit=5&labelSelector=even%3Dtrue&continue=${encodeURIComponent(forged)}`, 'forged'],
      [`${PAGES}?limit=5&labelSelector=even%3Dtrue&continue=${kube}`, 'unsigned'],
      [`${PAGES}?limit=5&labelSelector=even%3Dfalse&continue=${encodeURIComponent(token)}`, 'other selector'],
      [`${EVENTS}/events?limit=5&labelSelector=even%3Dtrue&continue=${encodeURIComponent(token)}`, 'other namespace'],
      [`/api/v1/namespaces?limit=5&labelSelector=even%3Dtrue&continue=${encodeURIComponent(token)}`, 'other resource'],
    ]) {
      const r = await call(base, 'GET', path);
      expect(r.status, why).toBe(400);
      expect(r.body.message, why).toBe('invalid continue token: continue key is not valid');
    }
    const ok = await call(base, 'GET', `${PAGES}?limit=5&labelSelector=even%3Dtrue&continue=${encodeURIComponent(token)}`);
    expect(ok.status).toBe(200);
  });

  it('paging options that contradict a continue are refused as Kubernetes refuses them', async () => {
    const token = (await call(base, 'GET', `${PAGES}?limit=5`)).body.metadata.continue;
    const withRv = await call(base, 'GET', `${PAGES}?limit=5&resourceVersion=3&continue=${encodeURIComponent(token)}`);
    expect([withRv.status, withRv.body.message]).toEqual([400, 'specifying resource version is not allowed when using continue']);
    const withMatch = await call(base, 'GET', `${PAGES}?limit=5&resourceVersion=3&resourceVersionMatch=Exact&continue=${encodeURIComponent(token)}`);
    expect(withMatch.status).toBe(422);
    expect(withMatch.body.details.causes.map((c: any) => c.field)).toContain('resourceVersionMatch');
    // rv=0 with a continue: the token wins (Kubernetes: "treated as Continue Token, Exact").
    const zero = await call(base, 'GET', `${PAGES}?limit=5&resourceVersion=0&continue=${encodeURIComponent(token)}`);
    expect(zero.status).toBe(200);
  });

  it('pages of a cluster-wide list walk every namespace in key order', async () => {
    const whole = (await call(base, 'GET', `${EVENTS}/events`)).body.items;
    const { items } = await listAll(base, `${EVENTS}/events`, 9);
    expect(names(items)).toEqual(names(whole));
  });
});
