/**
 * /metrics as a real Prometheus reads it: Debian's prometheus (installed by .ci/run) scrapes a running
 * orchd every second, and its HTTP API answers for request rates, registered watchers, watch events
 * and the process's memory as this test made them.
 */
import { readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindCase } from '../e2e/support.js';
import { TestPrometheus } from '../helpers/prometheus.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/poll.js';

const event = kindCase('Event');
const POSTS = 'apiserver_request_total{verb="POST",group="events.orch.io",resource="events",code="201"}';
const CREATES = 50;
const PACE_MS = 100;

describe('a real Prometheus scraping orchd', () => {
  let server: TestServer;
  let prom: TestPrometheus;

  beforeAll(async () => {
    server = await startServer({ storage: 'memory' });
    prom = await TestPrometheus.start(new URL(server.url).host);
    await prom.scrapedAfter(Date.now());
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
    await server?.stop();
  });

  /** Polls an instant query until its samples pass `ok` (the newest scrape may take a moment to be queryable). */
  async function until(promql: string, ok: (values: number[]) => boolean): Promise<number[]> {
    let values: number[] = [];
    // Past the deadline the caller's assertion shows the last samples seen.
    await eventually(async () => ok((values = (await prom.query(promql)).map((s) => s.value))), { stepMs: 200 }).catch(() => undefined);
    return values;
  }

  it('reads the request count exactly and its rate as the test paced its creates', async () => {
    const done: number[] = [];
    const started = Date.now();
    for (let i = 0; i < CREATES; i++) {
      const r = await call(server.url, 'POST', event.collection('default'), event.make(`prom-${i}`));
      expect(r.status, r.text).toBe(201);
      done.push(Date.now());
      await new Promise((r) => setTimeout(r, Math.max(0, started + (i + 1) * PACE_MS - Date.now())));
    }
    await prom.scrapedAfter(Date.now());
    expect(await until(POSTS, (v) => v[0] === CREATES)).toEqual([CREATES]);

    // The rate over a window inside the run, against the creates the test saw answered in it.
    const windowS = 3;
    const at = done[Math.floor(CREATES * 0.8)];
    const made = done.filter((t) => t > at - windowS * 1000 && t <= at).length / windowS;
    const [rate] = (await prom.query(`rate(${POSTS}[${windowS}s])`, at / 1000)).map((s) => s.value);
    expect(rate).toBeGreaterThan(made * 0.5);
    expect(rate).toBeLessThan(made * 1.5);
  });

  it('shows the watchers open while they are, and counts the events sent to each', async () => {
    const events = (await call(server.url, 'GET', event.collection('default'))).body.items.length;
    expect(events).toBe(CREATES);
    const open: IncomingMessage[] = [];
    for (let i = 0; i < 3; i++) open.push(await new Promise<IncomingMessage>((resolve, reject) => get(`${server.url}${event.collection('default')}?watch=true`, resolve).on('error', reject)));
    for (const res of open) res.resume();
    const watchers = 'apiserver_registered_watchers{group="events.orch.io",kind="Event"}';
    await prom.scrapedAfter(Date.now());
    expect(await until(watchers, (v) => v[0] === 3)).toEqual([3]);
    // Each watch without a resourceVersion starts with an ADDED event per stored Event.
    const sent = 'apiserver_watch_events_total{group="events.orch.io",version="v1",kind="Event"}';
    expect(await until(sent, (v) => v[0] === 3 * events)).toEqual([3 * events]);
    expect(await until(`apiserver_watch_events_sizes_count{kind="Event"}`, (v) => v[0] === 3 * events)).toEqual([3 * events]);

    for (const res of open) res.destroy();
    await prom.scrapedAfter(Date.now() + 100);
    expect(await until(watchers, (v) => v.length === 0)).toEqual([]);
  });

  it("reports the process's resident memory as the kernel does", async () => {
    const [rss] = await until('process_resident_memory_bytes', (v) => v.length === 1);
    const pages = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[21]);
    const now = pages * 4096;
    expect(rss).toBeGreaterThan(now * 0.5);
    expect(rss).toBeLessThan(now * 2);
    expect((await prom.query('nodejs_heap_size_used_bytes')).map((s) => s.value > 0)).toEqual([true]);
  });
});
