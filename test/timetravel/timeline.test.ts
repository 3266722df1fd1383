import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';

/*
 * The /debug/timeline page in a real headless Chromium (Debian's, which test/setup/system-packages.sh installs): it loads,
 * plots the writes, a click on a bar lists the state at that moment, a click on an object shows its
 * history with diffs.
 */

const CHROMIUM = '/usr/bin/chromium';
const NS = 'tl-a';
let server: TestServer;
let browser: Browser;
let page: Page;
const rv: Record<string, number> = {};

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (test/setup/system-packages.sh does)`);
  server = await startServer();
  rv.ns = await createNamespace(server.url, NS);
  rv.e1 = await createEvent(server.url, 'e1', NS);
  rv.label = await labelEvent(server.url, 'e1', { step: '2' }, NS);
  rv.e2 = await createEvent(server.url, 'e2', NS);
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('/debug/timeline in a browser', () => {
  it('plots the writes by resource, with the log commit times', async () => {
    await page.goto(`${server.url}/debug/timeline`);
    await page.waitForSelector('rect.bucket');
    const summary = await page.$eval('#summary', (e) => e.textContent ?? '');
    expect(summary).toContain(`..${rv.e2}`);
    expect(summary).toContain('commit times from the log');
    const resources = await page.$$eval('rect[data-resource]', (rs) => [...new Set(rs.map((r) => r.getAttribute('data-resource')))].sort());
    expect(resources).toEqual(expect.arrayContaining(['events.events.orch.io', 'namespaces']));
    expect(await page.$eval('#legend', (e) => e.textContent)).toContain('events.events.orch.io');
  });

  it('a click on the last bar lists the state then; a click on an object shows its history with diffs', async () => {
    const bars = await page.$$('rect.bucket');
    await bars[bars.length - 1].click();
    await page.waitForSelector('#state tr[data-key]');
    expect(await page.$eval('#state-title', (e) => e.textContent)).toBe(`State at version ${rv.e2}`);
    const rows = await page.$$eval('#state tr[data-key]', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent).join(' ')));
    expect(rows).toContain(`events.events.orch.io ${NS} e1 ${rv.label}`);
    expect(rows).toContain(`events.events.orch.io ${NS} e2 ${rv.e2}`);
    await page.click(`#state tr[data-key="events.orch.io/events/${NS}/e1"]`);
    await page.waitForSelector('#history .version');
    const versions = await page.$$eval('#history .version h3', (hs) => hs.map((h) => h.textContent ?? ''));
    expect(versions.map((v) => v.split(/\s+/).slice(0, 2).join(' '))).toEqual([`${rv.e1} ADDED`, `${rv.label} MODIFIED`]);
    const added = await page.$$eval('#history .version:last-child pre .add', (ls) => ls.map((l) => l.textContent));
    expect(added).toContain('+    step: "2"\n');
  });

  it('the state at a version below the horizon or past the head is refused with the API error', async () => {
    const past = await call(server.url, 'GET', `/debug/timeline/state?rv=${rv.e2 + 1000}`);
    expect(past.status).toBe(504);
    const bad = await call(server.url, 'GET', '/debug/timeline/state?rv=x');
    expect([bad.status, bad.body.reason]).toEqual([400, 'BadRequest']);
    const first = await call(server.url, 'GET', `/debug/timeline/history?key=${encodeURIComponent(`events.orch.io/events/${NS}/e1`)}`);
    expect(first.body.versions.map((v: any) => v.type)).toEqual(['ADDED', 'MODIFIED']);
    await server.store.compact(rv.label);
    const gone = await call(server.url, 'GET', '/debug/timeline/state?rv=1');
    expect([gone.status, gone.body.message]).toEqual([410, `too old resource version: 1 (${rv.label - 1})`]);
    expect((await call(server.url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).status).toBe(200);
  });
});
