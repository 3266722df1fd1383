import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { launchChromium } from '../helpers/chromium.js';
import { rows as rowsOf, setFilter, texts as textsOf } from '../helpers/timeline-page.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { EVENTS, createEvent, createNamespace } from '../watch/objects.js';
import { startReplayOf } from './helpers.js';

/*
 * The /debug/timeline page in a real headless Chromium (Debian's, which test/setup/system-packages.sh
 * installs), on a small incident: a person patches one Event of a namespace, then a controller
 * (janitor) deletes the other five. The page must show it: bars coloured by verb with the deletes
 * marked, a time axis, who changed what in a bar (deletes included), filters, each object's history
 * (a deleted one's too) with the writer the log kept, and diffs without managedFields unless asked.
 * The same history is served by a replay of the folder. ORCHD_TIMELINE_SCREENSHOT names where the
 * screenshot is kept (docs/timeline.png for the README); else it goes to a temp folder.
 */

const NS = 'shop';
const OTHER = 'tl-b';
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'];
const KEY = (name: string, ns = NS) => `events.orch.io/events/${ns}/${name}`;
let server: TestServer;
let browser: Browser;
let page: Page;
let dataDir: string;
const rv: Record<string, number> = {};

beforeAll(async () => {
  dataDir = join(tempDir('orchd-timeline-', { until: 'file' }), 'data');
  server = await startServer({ dataDir });
  await createNamespace(server.url, NS);
  await createNamespace(server.url, OTHER);
  for (const n of NAMES) rv[n] = await createEvent(server.url, n, NS);
  rv.other = await createEvent(server.url, 'x', OTHER);
  const patched = await call(
    server.url,
    'PATCH',
    `${EVENTS}/namespaces/${NS}/events/a?fieldManager=oncall-person`,
    { metadata: { labels: { keep: 'yes' } } },
    { 'Content-Type': 'application/merge-patch+json' },
  );
  expect(patched.status).toBe(200);
  rv.patch = Number(patched.body.metadata.resourceVersion);
  for (const n of NAMES.slice(1)) expect((await call(server.url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/${n}`, undefined, { 'User-Agent': 'janitor/1.0' })).status).toBe(200);
  rv.head = Number((await call(server.url, 'GET', `${EVENTS}/events?limit=1`)).body.metadata.resourceVersion);
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 1400 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const texts = (selector: string) => textsOf(page, selector);
const rows = (table: string) => rowsOf(page, table);

describe('/debug/timeline in a browser', () => {
  it('plots the writes coloured by verb, the deletes marked, on a labelled time axis', async () => {
    await page.goto(`${server.url}/debug/timeline`);
    await page.waitForSelector('rect.bucket');
    const summary = await page.$eval('#summary', (e) => e.textContent ?? '');
    expect(summary).toContain(`..${rv.head}`);
    expect(summary).toContain('commit times from the log');
    const verbs = await page.$$eval('rect.verb', (rs) => [...new Set(rs.map((r) => `${r.getAttribute('data-verb')} ${r.getAttribute('fill')}`))].sort());
    expect(verbs).toEqual(['create #59a14f', 'delete #e15759', 'patch #f28e2b']);
    const marks = await page.$$eval('text.delete-mark', (ms) => ms.map((m) => Number(m.getAttribute('data-deletes'))));
    expect(marks.reduce((a, n) => a + n, 0)).toBe(NAMES.length - 1);
    expect(await texts('#legend span')).toEqual(['create', 'patch', 'delete']);
    const ticks = await texts('text.tick');
    // A label every few bars, each a time of day (to the ms when they are under a second apart), no two the same.
    const labels = ticks.filter((t) => /^\d\d:\d\d:\d\d(\.\d{3})?$/.test(t));
    expect(labels.length).toBeGreaterThanOrEqual(4);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it('a click on a bar lists who changed what then, deletes included, and the state at its end', async () => {
    const bars = await page.$$('rect.bucket');
    const withDeletes = await page.$$eval('text.delete-mark', (ms) => ms.map((m) => Number(m.getAttribute('data-bucket'))));
    const changed: string[] = [];
    for (const i of withDeletes) {
      await bars[i].click();
      const span = await page.evaluate((b) => `${b.getAttribute('data-first')}..${b.getAttribute('data-rv')}`, bars[i]);
      await page.waitForSelector(`#changes[data-span="${span}"]`);
      changed.push(...(await rows('#changes')));
    }
    expect(
      changed
        .filter((r) => / delete /.test(r))
        .map((r) => r.replace(/^\d+ \S+ /, ''))
        .sort(),
    ).toEqual(NAMES.slice(1).map((n) => `delete events.events.orch.io ${NS} ${n} system:anonymous janitor`));
    const last = bars.length - 1;
    await bars[last].click();
    await page.waitForFunction((r) => document.getElementById('state-title')?.textContent === `State at version ${r}`, {}, rv.head);
    await page.waitForSelector('#state tr[data-key]');
    const state = await rows('#state');
    expect(state).toContain(`events.events.orch.io ${NS} a ${rv.patch}`);
    expect(state.filter((r) => r.startsWith(`events.events.orch.io ${NS} `))).toHaveLength(1);
  });

  it('filters by namespace, name and writer narrow the changes', async () => {
    await page.$eval('#f-all', (b) => (b as HTMLButtonElement).click());
    await page.waitForFunction(() => document.getElementById('changes-title')?.textContent?.startsWith('Every change'));
    // Every write of the plot's span: the server's own at its start too.
    await page.waitForFunction((n) => document.querySelectorAll('#changes tr[data-key]').length > n, {}, 2 + NAMES.length + 1 + 1 + NAMES.length - 1);
    const filter = (id: string, value: string) => setFilter(page, id, value);
    await filter('f-writer', 'janitor');
    await page.waitForFunction((n) => document.querySelectorAll('#changes tr[data-key]').length === n, {}, NAMES.length - 1);
    await filter('f-writer', '');
    await filter('f-namespace', OTHER);
    await page.waitForFunction(() => document.querySelectorAll('#changes tr[data-key]').length === 1);
    expect(await rows('#changes')).toEqual([expect.stringMatching(new RegExp(`^${rv.other} .* create events\\.events\\.orch\\.io ${OTHER} x system:anonymous node$`))]);
    await filter('f-namespace', NS);
    await filter('f-name', 'a');
    await page.waitForFunction(() => document.querySelectorAll('#changes tr[data-key]').length === 2);
    expect((await rows('#changes')).map((r) => r.split(' ')[2])).toEqual(['create', 'patch']);
    await filter('f-name', 'c');
    await page.waitForFunction(() => [...document.querySelectorAll('#changes tr[data-key]')].map((tr) => tr.getAttribute('data-verb')).join() === 'create,delete');
  });

  it("a deleted object's history is reached from its delete, with the log's writers; diffs hide managedFields unless asked", async () => {
    await page.click(`#changes tr[data-verb="delete"][data-key="${KEY('c')}"]`);
    await page.waitForFunction(() => document.querySelectorAll('#history .version').length === 2);
    expect(await texts('#history .version h3')).toEqual([
      expect.stringMatching(new RegExp(`^${rv.c} ADDED \\S+ system:anonymous create node$`)),
      expect.stringMatching(/^\d+ DELETED \S+ system:anonymous delete janitor$/),
    ]);
    await setFilter(page, 'f-name', 'a');
    await page.waitForSelector('#changes tr[data-verb="patch"]');
    await page.click(`#changes tr[data-verb="patch"]`);
    await page.waitForFunction((r) => document.querySelector(`#history .version[data-rv="${r}"] h3`) !== null, {}, rv.patch);
    const heads = (await texts('#history .version h3')).map((h) => h.split(/\s+/));
    expect(heads.map((h) => [h[1], ...h.slice(3)])).toEqual([
      ['ADDED', 'system:anonymous', 'create', 'node'],
      ['MODIFIED', 'system:anonymous', 'patch', 'oncall-person'],
    ]);
    const diff = await page.$eval(`#history .version[data-rv="${rv.patch}"] pre`, (e) => e.textContent ?? '');
    expect(diff).toContain('+    keep: yes');
    // The patch's manager is named in managedFields only: hidden with them, shown with them.
    expect(diff).not.toMatch(/managedFields|oncall-person/);
    const shot = process.env.ORCHD_TIMELINE_SCREENSHOT ?? join(tempDir('orchd-timeline-shot-'), 'timeline.png');
    await page.screenshot({ path: shot as `${string}.png`, fullPage: true });
    expect((await readFile(shot)).subarray(1, 4).toString()).toBe('PNG');
    await page.click('#f-managed');
    await page.waitForFunction(() => (document.querySelector('#history .version:last-child pre')?.textContent ?? '').includes('oncall-person'));
    expect(await page.$eval(`#history .version[data-rv="${rv.patch}"] pre`, (e) => e.textContent ?? '')).toContain('oncall-person');
  });

  it('a replay of the folder names the same writers in its timeline', async () => {
    const r = await startReplayOf({ 'data-dir': dataDir }, { speed: 'max' });
    try {
      await r.done;
      const served = (await call(r.url, 'GET', `/debug/timeline/history?key=${encodeURIComponent(KEY('c'))}`)).body;
      expect(served.versions.map((v: any) => [v.type, v.user, v.verb, v.manager, v.guessed])).toEqual([
        ['ADDED', 'system:anonymous', 'create', 'node', false],
        ['DELETED', 'system:anonymous', 'delete', 'janitor', false],
      ]);
      const changes = (await call(r.url, 'GET', `/debug/timeline/changes?namespace=${NS}&writer=janitor`)).body.changes;
      expect(changes.map((c: any) => c.name)).toEqual(NAMES.slice(1));
    } finally {
      await r.close();
    }
  });

  it('the state at a version below the horizon or past the head is refused with the API error', async () => {
    const past = await call(server.url, 'GET', `/debug/timeline/state?rv=${rv.head + 1000}`);
    expect(past.status).toBe(504);
    const bad = await call(server.url, 'GET', '/debug/timeline/state?rv=x');
    expect([bad.status, bad.body.reason]).toEqual([400, 'BadRequest']);
    await server.store.compact(rv.patch);
    const gone = await call(server.url, 'GET', '/debug/timeline/state?rv=1');
    expect([gone.status, gone.body.message]).toEqual([410, `too old resource version: 1 (${rv.patch - 1})`]);
    expect((await call(server.url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).status).toBe(200);
  });
});
