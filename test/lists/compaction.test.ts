import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { createEvent, createNamespace, EVENTS, startListServer, type ListServer } from './server.js';

const NS = `${EVENTS}/namespaces/cmp/events`;
const started: ListServer[] = [];

afterAll(async () => {
  for (const s of started) await s.cleanup().catch(() => undefined);
});

async function relabel(base: string, name: string, labels: Record<string, string>): Promise<number> {
  const got = await call(base, 'GET', `${NS}/${name}`);
  got.body.metadata.labels = labels;
  const r = await call(base, 'PUT', `${NS}/${name}`, got.body);
  expect(r.status, r.text).toBe(200);
  return Number(r.body.metadata.resourceVersion);
}

const listAt = (base: string, rv: number) => call(base, 'GET', `${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);

describe('compaction', () => {
  it('keeps current state through compaction and restart; past versions above the horizon stay exact, older ones answer 410', async () => {
    // Keep the newest 4 log entries.
    let s = await startListServer({ historyRetention: { maxEntries: 4 } });
    started.push(s);
    await createNamespace(s.url, 'cmp');
    for (let i = 0; i < 8; i++) await createEvent(s.url, `c${i}`, 'cmp', { labels: { v: '0' } });
    // c0 is written once, long before the horizon; c1 updated before it; c2 updated after; c3 deleted before; c4 deleted after.
    await relabel(s.url, 'c1', { v: '1' });
    expect((await call(s.url, 'DELETE', `${NS}/c3`)).status).toBe(200);
    const before = await call(s.url, 'GET', NS);
    const rvBefore = Number(before.body.metadata.resourceVersion);
    const oldTokenPage = await call(s.url, 'GET', `${NS}?limit=3`);
    const oldToken: string = oldTokenPage.body.metadata.continue;
    for (let i = 0; i < 3; i++) await createEvent(s.url, `late${i}`, 'cmp');
    const rvUpd = await relabel(s.url, 'c2', { v: '2' });
    expect((await call(s.url, 'DELETE', `${NS}/c4`)).status).toBe(200);
    const current = await call(s.url, 'GET', NS);
    const last = Number(current.body.metadata.resourceVersion);
    // Versions still to be readable after compaction, with what they held.
    const pastLists = new Map<number, string>();
    for (let rv = last - 4; rv <= last; rv++) pastLists.set(rv, (await listAt(s.url, rv)).text);

    const done = await s.compactor.runOnce();
    expect(done?.horizon).toBe(last - 3);
    expect(done!.kept).toBeGreaterThan(0);
    const metrics = await call(s.url, 'GET', '/metrics');
    expect(metrics.text).toContain(`orchd_history_oldest_version ${last - 4}`);
    expect(metrics.text).toMatch(/orchd_compactions_total 1\b/);

    // The current state is whole, and every version from the horizon - 1 on is still exact.
    expect((await call(s.url, 'GET', NS)).text).toBe(current.text);
    for (const [rv, text] of pastLists) expect((await listAt(s.url, rv)).text, `rv ${rv}`).toBe(text);
    const c0 = await call(s.url, 'GET', `${NS}/c0?resourceVersion=${last - 4}&resourceVersionMatch=Exact`);
    expect(c0.status).toBe(200);
    const c2then = await call(s.url, 'GET', `${NS}/c2?resourceVersion=${rvUpd - 1}&resourceVersionMatch=Exact`);
    expect(c2then.body.metadata.labels).toEqual({ v: '0' });

    // Older: 410 Expired, for a list, an object, and a continue token.
    const oldList = await listAt(s.url, rvBefore);
    expect(oldList.status).toBe(410);
    expect(oldList.body).toMatchObject({ reason: 'Expired', code: 410, message: 'The resourceVersion for the provided list is too old.' });
    const oldGet = await call(s.url, 'GET', `${NS}/c0?resourceVersion=${rvBefore}&resourceVersionMatch=Exact`);
    expect(oldGet.status).toBe(410);
    expect(oldGet.body.message).toBe(`too old resource version: ${rvBefore} (${last - 4})`);
    const expired = await call(s.url, 'GET', `${NS}?limit=3&continue=${encodeURIComponent(oldToken)}`);
    expect(expired.status).toBe(410);
    expect(expired.body.reason).toBe('Expired');
    expect(expired.body.message).toMatch(/^The provided continue parameter is too old/);
    // The fresh token goes on after the same key, from the newest state.
    const fresh: string = expired.body.metadata.continue;
    expect(fresh).toBeTruthy();
    const rest: any[] = [];
    let token: string | undefined = fresh;
    while (token) {
      const page: { status: number; text: string; body: any } = await call(s.url, 'GET', `${NS}?limit=3&continue=${encodeURIComponent(token)}`);
      expect(page.status, page.text).toBe(200);
      rest.push(...page.body.items);
      token = page.body.metadata.continue;
    }
    const afterKey = oldTokenPage.body.items.at(-1).metadata.name;
    expect(rest.map((o) => o.metadata.name)).toEqual(current.body.items.map((o: any) => o.metadata.name).filter((n: string) => n > afterKey));

    // Restart: the current state and the retained past are all there.
    await s.stop();
    s = await startListServer({ dataDir: s.dataDir, historyRetention: { maxEntries: 4 } });
    started.push(s);
    expect((await call(s.url, 'GET', NS)).text).toBe(current.text);
    for (const [rv, text] of pastLists) expect((await listAt(s.url, rv)).text, `rv ${rv} after restart`).toBe(text);
    expect((await listAt(s.url, rvBefore)).status).toBe(410);

    // Writes go on; a second compaction drops what the first kept once it is superseded.
    await relabel(s.url, 'c0', { v: 'new' });
    for (let i = 0; i < 6; i++) await createEvent(s.url, `more${i}`, 'cmp');
    const now = await call(s.url, 'GET', NS);
    await s.compactor.runOnce();
    expect((await call(s.url, 'GET', NS)).text).toBe(now.text);
    await s.stop();
    s = await startListServer({ dataDir: s.dataDir, historyRetention: { maxEntries: 4 } });
    started.push(s);
    expect((await call(s.url, 'GET', NS)).text).toBe(now.text);
    const ns = await call(s.url, 'GET', '/api/v1/namespaces/cmp');
    expect(ns.status).toBe(200);
  }, 60_000);

  it('a read that compaction overtakes while it pages answers 410, never a wrong page', async () => {
    const s = await startListServer({ historyRetention: { maxEntries: 1 } });
    started.push(s);
    await createNamespace(s.url, 'cmp');
    for (let i = 0; i < 10; i++) await createEvent(s.url, `o${i}`, 'cmp');
    const first = await call(s.url, 'GET', `${NS}?limit=4`);
    await createEvent(s.url, 'x', 'cmp');
    await createEvent(s.url, 'y', 'cmp');
    // Before compaction the token still reads its snapshot, which excludes x and y.
    const second = await call(s.url, 'GET', `${NS}?limit=100&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(second.body.items.map((o: any) => o.metadata.name)).toEqual(['o4', 'o5', 'o6', 'o7', 'o8', 'o9']);
    await s.compactor.runOnce();
    const third = await call(s.url, 'GET', `${NS}?limit=100&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(third.status).toBe(410);
  });
});
