import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { launchChromium } from '../helpers/chromium.js';
import { jsonLines } from '../helpers/json-lines.js';
import { rows, setFilter, texts } from '../helpers/timeline-page.js';
import { run } from './helpers.js';
import { DELETED, LABELLED, NS, iso, recordIncident, type Incident } from './on-call-scenario.js';

/*
 * The /debug/timeline page in a real headless Chromium on the on-call incident (./on-call-scenario.ts;
 * issue 41 item 2): can a person find the incident there? Writes coloured by verb with janitor's
 * deletes marked, a time axis with readable labels, the bars of the deletes listing who deleted what
 * (the deleted namespace's Event too), filters by kind, namespace, name and writer, a deleted Event's
 * history reached from its delete with the writers `orchd log` names, and diffs without managedFields
 * unless asked. Each expectation is read from the folder's log through `orchd log`, not from the page.
 */

interface Logged {
  rv: number;
  type: string;
  verb: string;
  subresource?: string;
  user: string;
  manager: string;
  namespace: string;
  name: string;
}

let incident: Incident;
let browser: Browser;
let page: Page;
let logged: Logged[];

beforeAll(async () => {
  [incident, browser] = await Promise.all([recordIncident(), launchChromium()]);
  const log = await run('log', '--data-dir', join(incident.work, 'data'), '-o', 'json');
  logged = jsonLines(log.out).map((l) => ({
    rv: Number(l.resourceVersion),
    type: l.type,
    verb: l.writer.verb,
    subresource: l.writer.subresource,
    user: l.writer.user,
    manager: l.writer.manager ?? '-',
    namespace: l.object.metadata.namespace ?? '',
    name: l.object.metadata.name,
  }));
  page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 1400 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await incident?.server.close();
});

const rowCount = (n: number) => page.waitForFunction((k) => document.querySelectorAll('#changes tr[data-key]').length === k, {}, n);
/** A row of #changes as the page prints it, after its version and time. */
const asRow = (l: Logged, resource: string) => `${l.verb}${l.subresource ? `/${l.subresource}` : ''} ${resource} ${l.namespace} ${l.name} ${l.user} ${l.manager}`;

describe('/debug/timeline on the on-call incident, in a browser', () => {
  it('plots the writes coloured by verb, the deletes marked where they were made, on a time axis with readable labels', async () => {
    await page.goto(`${incident.server.url}/debug/timeline`);
    await page.waitForSelector('rect.bucket');
    expect(await page.$eval('#summary', (e) => e.textContent ?? '')).toContain(`..${incident.head}`);
    // One colour a verb, each verb its own; the legend names them in the same colours.
    const fills = await page.$$eval('rect.verb', (rs) => rs.map((r) => [r.getAttribute('data-verb')!, r.getAttribute('fill')!] as const));
    const colour = new Map(fills);
    expect(new Set(fills.map(([v, f]) => `${v} ${f}`)).size).toBe(colour.size);
    expect(new Set(colour.values()).size).toBe(colour.size);
    expect([...colour.keys()].sort()).toEqual([...new Set(logged.map((l) => l.verb))].sort());
    const legend = await page.$$eval('#legend span', (ss) => ss.map((s) => [s.getAttribute('data-verb')!, s.querySelector('i')!.getAttribute('style')!.replace('background:', '')] as const));
    expect(new Map(legend)).toEqual(colour);
    // The deletes marked on the bars that hold them: janitor's 200, the namespace's and its Event's (the requests, by the log's verb).
    const deletes = logged.filter((l) => l.verb === 'delete');
    expect(deletes.length).toBe(DELETED + 2);
    const marks = await page.$$eval('text.delete-mark', (ms) =>
      ms.map((m) => {
        const bar = document.querySelectorAll('rect.bucket')[Number(m.getAttribute('data-bucket'))];
        return [Number(bar.getAttribute('data-first')), Number(bar.getAttribute('data-rv')), Number(m.getAttribute('data-deletes'))];
      }),
    );
    expect(marks.reduce((a, [, , n]) => a + n, 0)).toBe(deletes.length);
    for (const [first, last, n] of marks) expect(deletes.filter((d) => d.rv >= first && d.rv <= last)).toHaveLength(n);
    // A label every few bars: times of day within the incident's span, in order, no two the same.
    const labels = (await texts(page, 'text.tick')).filter((t) => /^\d\d:\d\d:\d\d(\.\d{3})?$/.test(t));
    expect(labels.length).toBeGreaterThanOrEqual(4);
    expect(new Set(labels).size).toBe(labels.length);
    expect([...labels].sort()).toEqual(labels);
    const [start, end] = [iso(incident.timeOf.get(1)!).slice(11, 23), iso(incident.timeOf.get(incident.head)! + 1000).slice(11, 23)];
    expect(labels.filter((t) => t.slice(0, 8) < start.slice(0, 8) || t > end)).toEqual([]);
  });

  it('a click on each bar with deletes lists who changed what then: janitor’s deletes, and the deleted namespace and its Event', async () => {
    const bars = await page.$$('rect.bucket');
    const withDeletes = await page.$$eval('text.delete-mark', (ms) => ms.map((m) => Number(m.getAttribute('data-bucket'))));
    // And the bars of the objects gone: the namespace's last entry, its controller's, may be in the next bar.
    const spans = await page.$$eval('rect.bucket', (bs) => bs.map((b) => [Number(b.getAttribute('data-first')), Number(b.getAttribute('data-rv'))]));
    const ofGone = logged.filter((l) => l.type === 'DELETED').map((l) => spans.findIndex(([first, last]) => first <= l.rv && l.rv <= last));
    const listed: string[] = [];
    for (const i of new Set([...withDeletes, ...ofGone])) {
      await bars[i].click();
      const span = await page.evaluate((b) => `${b.getAttribute('data-first')}..${b.getAttribute('data-rv')}`, bars[i]);
      await page.waitForSelector(`#changes[data-span="${span}"]`);
      expect(await page.$eval('#changes-title', (e) => e.textContent)).not.toContain('the newest');
      listed.push(...(await rows(page, '#changes')).map((r) => r.replace(/^(\d+) \S+ /, '$1 ')));
    }
    const resource = (l: Logged) => (l.namespace === '' ? 'namespaces' : 'events.events.orch.io');
    const row = (l: Logged) => `${l.rv} ${asRow(l, resource(l))}`;
    // Each delete request, and each object gone (the namespace's last entry is its controller's, as the log says it).
    expect(listed.filter((r) => / delete /.test(r)).sort()).toEqual(
      logged
        .filter((l) => l.verb === 'delete')
        .map(row)
        .sort(),
    );
    for (const gone of logged.filter((l) => l.type === 'DELETED')) expect(listed.filter((r) => r.startsWith(`${gone.rv} `))).toEqual([row(gone)]);
    expect(listed.filter((r) => new RegExp(`^\\d+ delete events\\.events\\.orch\\.io ${NS} \\S+ system:anonymous janitor$`).test(r))).toHaveLength(DELETED);
    expect(listed.filter((r) => / (events\.events\.orch\.io scratch left|namespaces {2}scratch) /.test(r)).map((r) => r.replace(/^\d+ /, ''))).toEqual([
      'create namespaces  scratch system:anonymous node',
      'create events.events.orch.io scratch left system:anonymous node',
      'delete namespaces  scratch system:anonymous node',
      // The namespace controller: the Event deleted, the namespace's status, and its finalize, where it is gone (as `orchd log` says).
      'delete events.events.orch.io scratch left system:apiserver -',
      'update/status namespaces  scratch system:apiserver -',
      'update/finalize namespaces  scratch system:apiserver -',
    ]);
  });

  it('filters by kind, namespace, name and writer narrow the changes to the incident', async () => {
    await page.$eval('#f-all', (b) => (b as HTMLButtonElement).click());
    await page.waitForFunction(() => document.getElementById('changes-title')?.textContent?.startsWith('Every change'));
    await setFilter(page, 'f-writer', 'janitor');
    await rowCount(DELETED);
    await setFilter(page, 'f-writer', 'rollout-bot');
    await rowCount(1);
    expect((await rows(page, '#changes'))[0]).toMatch(
      new RegExp(`^${incident.policyChanged} \\S+ update validatingadmissionpolicies\\.admissionregistration\\.orch\\.io +event-guard system:anonymous rollout-bot$`),
    );
    await setFilter(page, 'f-writer', '');
    // The kind the recording defined after it started: its one object.
    const alerts = await page.$$eval('#f-resource option', (os) => os.map((o) => (o as HTMLOptionElement).value).filter((v) => v.startsWith('alerts.')));
    expect(alerts).toEqual(['alerts.oncall.example.com']);
    await setFilter(page, 'f-resource', alerts[0]);
    await rowCount(1);
    expect((await rows(page, '#changes'))[0]).toMatch(new RegExp(`^${incident.alert} \\S+ create alerts\\.oncall\\.example\\.com ${NS} events-flood `));
    await setFilter(page, 'f-resource', '');
    await setFilter(page, 'f-namespace', 'scratch');
    await page.waitForFunction(() => [...document.querySelectorAll('#changes tr[data-key]')].map((tr) => tr.getAttribute('data-verb')).join() === 'create,delete');
    await setFilter(page, 'f-namespace', NS);
    const gone = [...incident.deleted.keys()].find((n) => incident.labelled.has(n))!;
    await setFilter(page, 'f-name', gone);
    await page.waitForFunction(() => [...document.querySelectorAll('#changes tr[data-key]')].map((tr) => tr.getAttribute('data-verb')).join() === 'create,patch,delete');
    expect((await rows(page, '#changes')).map((r) => r.replace(/^\d+ \S+ /, ''))).toEqual(logged.filter((l) => l.namespace === NS && l.name === gone).map((l) => asRow(l, 'events.events.orch.io')));
    expect(logged.filter((l) => l.verb === 'patch')).toHaveLength(LABELLED);
  });

  it("a deleted Event's history is reached from its delete, with the log's writers; its diffs hide managedFields unless asked", async () => {
    const gone = [...incident.deleted.keys()].find((n) => incident.labelled.has(n))!;
    await page.click(`#changes tr[data-verb="delete"]`);
    await page.waitForFunction(() => document.querySelectorAll('#history .version').length === 3);
    const history = jsonLines((await run('history', '--data-dir', join(incident.work, 'data'), `events/${gone}`, '-n', NS, '-o', 'json-patch')).out);
    expect((await texts(page, '#history .version h3')).map((h) => h.split(' '))).toEqual(
      history.map((v) => [v.resourceVersion, v.type, v.time, v.user, ...v.manager.replace(/^(\S+) \((\w+)\)$/, '$2 $1').split(' ')]),
    );
    expect(await texts(page, '#history-title')).toEqual([`History of events.events.orch.io/${NS}/${gone}`]);
    const patched = String(incident.labelled.get(gone));
    const diff = await page.$eval(`#history .version[data-rv="${patched}"] pre`, (e) => e.textContent ?? '');
    expect(diff).toContain('+    triaged: yes');
    expect(diff).not.toMatch(/managedFields|f:triaged/);
    const shot = join(incident.work, 'on-call-timeline.png');
    await page.screenshot({ path: shot as `${string}.png`, fullPage: true });
    expect((await readFile(shot)).subarray(1, 4).toString()).toBe('PNG');
    await page.click('#f-managed');
    await page.waitForFunction((rv) => (document.querySelector(`#history .version[data-rv="${rv}"] pre`)?.textContent ?? '').includes('f:triaged'), {}, patched);
  });
});
