/**
 * lists (issue 4): over N seeded Events (100k by default, --list-objects), replayed by a fresh orchd:
 *   walk  every page of 500 with continue tokens while 1,000 writes/s (PUTs of seeded objects) arrive;
 *   exact the whole list at the version right after seeding (resourceVersionMatch=Exact), once the
 *         writes have changed ~10 % of the objects, beside the same list at the current version;
 *   label a label selector matching 1 % of the objects (one of GROUPS groups), 1 and 16 clients.
 * Answers are counted, not kept (bench/http-client.ts keep), except the first 2 KB a walk needs for
 * its continue token; each operation's answer is checked once in full before it is timed.
 */
import { rm } from 'node:fs/promises';
import { bounds, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, fixedRate, type Op, type RunResult } from '../load.js';
import { Orchd } from '../orchd.js';
import { eventBody, eventsPath, GROUP_LABEL, GROUPS } from '../payload.js';
import { memory } from '../proc.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents, seedName } from '../seed.js';
import { CONTINUE_WITHIN, continueToken } from './reads.js';

const PAGE = 500;
const WRITE_RATE = 1000;
const WRITE_IN_FLIGHT = 64;
/** Share of the objects the writes change before the Exact list reads the seeded version. */
const CHANGED_SHARE = 0.1;
/** A full list of 100k objects is ~160 MB: a few of them are enough. */
const FULL_LIST_MAX_OPS = 10;
const TARGET_SIZE = 100_000;

interface ListCell {
  id: 'walk-quiet' | 'walk' | 'exact' | 'latest' | 'label-1' | 'label-16';
  label: string;
  clients: number;
  run: RunResult;
  replyBytes: number;
  writes?: RunResult & { skipped: number };
}

interface ListShape {
  resourceVersion: string;
  items: number;
  names: string[];
  continue?: string;
}

/** One whole answer, parsed: the timed loops keep none of it, so what they time is checked here. */
async function fetchList(http: HttpClient, path: string): Promise<ListShape> {
  const res = await http.request('GET', path);
  expectStatus(res, 200);
  const list = JSON.parse(res.body.toString('utf8')) as { metadata: { resourceVersion: string; continue?: string }; items: { metadata: { name: string; labels?: Record<string, string> } }[] };
  return { resourceVersion: list.metadata.resourceVersion, items: list.items.length, names: list.items.map((i) => i.metadata.name), continue: list.metadata.continue };
}

function counted(http: HttpClient, path: (c: number) => string, keep: number, onReply?: (c: number, head: Buffer) => void) {
  const tally = { bytes: 0, replies: 0 };
  const op: Op = async (client) => {
    const res = await http.request('GET', path(client), undefined, { keep });
    expectStatus(res, 200);
    onReply?.(client, res.body);
    tally.bytes += res.bytes;
    tally.replies++;
    return true;
  };
  return { op, replyBytes: () => (tally.replies ? tally.bytes / tally.replies : NaN) };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const n = ctx.opts.listObjects;
  const dataDir = await Orchd.newDataDir();
  ctx.log(`lists: seeding ${n} Events`);
  await seedEvents(ctx.orchdCli, dataDir, n);
  const { orchd, ready } = await startOrchd(ctx, dataDir);
  const watched = { orchd: orchd.pid };
  const cells: ListCell[] = [];
  const seededVersion = String(ready.seq);
  // The seed's template Event (created through the API) is stored beside the N clones.
  const stored = n + 1;
  const notes: string[] = [];
  let written = 0;
  let rss = NaN;
  try {
    const http = new HttpClient(ready.url, 16);
    const writer = new HttpClient(ready.url, WRITE_IN_FLIGHT);
    // Object k % n, in order: the first writes change distinct objects. The body is the seeded one
    // (the seed clones the template Event: its regarding is immutable, its group label is the
    // object's) with a new annotation, so every PUT is a real change (a no-op update gets no version).
    let applied = 0;
    const write: Op = async () => {
      const i = written++ % n;
      const body = eventBody(seedName(i), 0, Date.now());
      body.metadata.labels[GROUP_LABEL] = `g${i % GROUPS}`;
      expectStatus(await writer.request('PUT', `${eventsPath()}/${seedName(i)}`, Buffer.from(JSON.stringify(body)), { keep: 0 }), 200);
      applied++;
      return true;
    };

    // walk, without and then with writes arriving
    const firstPage = await fetchList(http, `${eventsPath()}?limit=${PAGE}`);
    if (firstPage.items !== Math.min(PAGE, n) || (n > PAGE && !firstPage.continue))
      throw new Error(`lists: the first page has ${firstPage.items} items, continue ${firstPage.continue ? 'set' : 'missing'}`);
    const walker = () => {
      let token: string | undefined;
      const state = { walks: 0 };
      const c = counted(
        http,
        () => `${eventsPath()}?limit=${PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
        CONTINUE_WITHIN,
        (_c, head) => {
          token = continueToken(head);
          if (!token) state.walks++;
        },
      );
      return { ...c, state };
    };
    ctx.log(`lists: walking pages of ${PAGE}, no writes`);
    const quiet = walker();
    const quietRun = await closedLoop(1, bounds(ctx), quiet.op, watched);
    cells.push({ id: 'walk-quiet', label: `every page of ${PAGE} (continue), no writes`, clients: 1, run: quietRun, replyBytes: quiet.replyBytes() });
    ctx.log(`lists: walking pages of ${PAGE} while ${WRITE_RATE} writes/s arrive`);
    const walk = walker();
    const [walkRun, writes] = await Promise.all([closedLoop(1, bounds(ctx), walk.op, watched), fixedRate(WRITE_RATE, WRITE_IN_FLIGHT, bounds(ctx), write, watched)]);
    const walks = walk.state.walks;
    cells.push({ id: 'walk', label: `every page of ${PAGE} (continue), ${WRITE_RATE} writes/s arriving`, clients: 1, run: walkRun, replyBytes: walk.replyBytes(), writes });
    notes.push(
      `walk: ${walks} full walks completed in the window (one walk: ${Math.ceil(stored / PAGE)} pages); writes: ${writes.ops} PUTs answered (${writes.throughput.toFixed(0)}/s, p99 ${cellStats(writes).p99.toFixed(1)} ms), ${writes.skipped} skipped for more than ${WRITE_IN_FLIGHT} in flight, ${writes.errors} failed.`,
      ...errorNote('writes', writes),
    );

    // Change ~10 % of the objects before reading the seeded version.
    if (writes.ops === 0) throw new Error(`lists: no write succeeded (first error: ${writes.firstError})`);
    const missing = Math.ceil(n * CHANGED_SHARE) - written;
    if (missing > 0) {
      ctx.log(`lists: ${missing} more writes, to change ${CHANGED_SHARE * 100} % of the objects`);
      const more = await closedLoop(WRITE_IN_FLIGHT, { warmupMs: 0, durationMs: 300_000, maxOps: missing }, write);
      if (more.errors) throw new Error(`lists: ${more.errors} of the extra writes failed (first: ${more.firstError})`);
    }
    const changed = Math.min(applied, n);

    // exact at the seeded version, and the same list now
    const exactPath = `${eventsPath()}?resourceVersion=${seededVersion}&resourceVersionMatch=Exact`;
    const exact = await fetchList(http, exactPath);
    if (exact.resourceVersion !== seededVersion || exact.items !== stored)
      throw new Error(`lists: the Exact list at ${seededVersion} answered version ${exact.resourceVersion} with ${exact.items} items (expected ${stored})`);
    const latest = await fetchList(http, eventsPath());
    if (Number(latest.resourceVersion) <= ready.seq || latest.items !== stored) throw new Error(`lists: the current list answered version ${latest.resourceVersion} with ${latest.items} items`);
    for (const [id, path, label] of [
      ['exact', exactPath, `all ${n.toLocaleString('en-US')}, Exact at the seeded version (${((changed / n) * 100).toFixed(0)} % changed since)`],
      ['latest', eventsPath(), `all ${n.toLocaleString('en-US')}, current version (for comparison)`],
    ] as const) {
      ctx.log(`lists: ${id} full list`);
      const c = counted(http, () => path, 0);
      // The full list just checked was the warm-up.
      const r = await closedLoop(1, { ...bounds(ctx), warmupMs: 0, maxOps: FULL_LIST_MAX_OPS }, c.op, watched);
      cells.push({ id, label, clients: 1, run: r, replyBytes: c.replyBytes() });
    }

    // selective label list
    const selector = `${GROUP_LABEL}=g7`;
    const labelPath = `${eventsPath()}?labelSelector=${encodeURIComponent(selector)}&limit=${PAGE}`;
    const matching = await fetchList(http, labelPath);
    const expected = Math.min(PAGE, Math.floor(n / GROUPS) + (n % GROUPS > 7 ? 1 : 0));
    if (matching.items !== expected) throw new Error(`lists: ${selector} answered ${matching.items} items, expected ${expected}`);
    for (const clients of [1, 16] as const) {
      ctx.log(`lists: label selector, ${clients} clients`);
      const c = counted(http, () => labelPath, 0);
      const r = await closedLoop(clients, bounds(ctx), c.op, watched);
      cells.push({ id: `label-${clients}`, label: `label selector ${selector} (1 % match), limit ${PAGE}, ${clients} client${clients > 1 ? 's' : ''}`, clients, run: r, replyBytes: c.replyBytes() });
    }
    rss = memory(orchd.pid)?.rss ?? NaN;
    http.close();
    writer.close();
  } finally {
    await orchd.dispose();
    // The seeded folder is the harness's own (not the server's to remove).
    await rm(dataDir, { recursive: true, force: true });
  }

  const rows: Row[] = cells.map((c) => ({ size: n, op: c.label, clients: c.clients, ...orchdFields(c.run), bytes: c.replyBytes }));
  const columns = [col('size', 'objects', 'int'), col('op', 'list', 'text'), col('clients', 'clients', 'int'), ...orchdColumns('lists/s'), col('bytes', 'reply', 'bytes')];
  const allNotes = [
    `Closed loop; each cell ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured (full lists: no warm-up beyond the one checked, at most ${FULL_LIST_MAX_OPS}). Objects: ~1.6 KB Events written straight into orchd's log (bench/seed.ts), replayed by a fresh orchd; the seeded version is ${seededVersion}. The client keeps only what it needs of each answer (2 KB for a continue token, nothing otherwise); every operation's answer was checked once in full first.`,
    ...notes,
    `orchd RSS after the cells: ${(rss / 2 ** 20).toFixed(0)} MiB.`,
    ...cells.flatMap((c) => errorNote(`orchd ${c.id}`, c.run)),
  ];

  const at100k = n === TARGET_SIZE;
  const find = (id: ListCell['id']) => cells.find((c) => c.id === id);
  const check = (name: string, target: string, cell: ListCell | undefined, value: (s: ReturnType<typeof cellStats>) => number, limit: number, unit = 'ms'): TargetCheck => {
    if (!cell) return { scenario: 'lists', name, target, measured: 'not measured', met: null };
    const v = value(cellStats(cell.run));
    const shown = unit === 's' ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(2)} ms`;
    return { scenario: 'lists', name, target, measured: at100k ? shown : `not at 100k (${shown} at ${n})`, met: at100k ? v < limit : null };
  };
  const targets: TargetCheck[] = [
    check(`page of ${PAGE} while walking 100k with ${WRITE_RATE} writes/s, p99`, '< 10 ms', find('walk'), (s) => s.p99, 10),
    check('label selector hitting 1 % of 100k, p99 (1 client)', '< 5 ms', find('label-1'), (s) => s.p99, 5),
    check('Exact list of 100k at an old version, slowest run', '< 1 s', find('exact'), (s) => s.max, 1000, 's'),
  ];
  return {
    id: 'lists',
    title: lists.title,
    tables: [{ title: 'lists: pages under writes, Exact at an old version, selective label list', columns, rows, notes: allNotes }],
    plots: [
      histogramPlot(
        `orchd list latency at ${n.toLocaleString('en-US')} objects`,
        cells.map((c) => histogramSeries(c.id, c.run.latency)),
      ),
    ],
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const lists: Scenario = { id: 'lists', title: 'Lists: pages under writes, Exact at an old version, selective label list', run };
