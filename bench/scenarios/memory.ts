/**
 * memory:
 *   per object  RSS of an idle empty orchd, then after N Events created through the API, then after
 *               a graceful restart that loads them from the checkpoint;
 *   list reads  over N seeded Events, a plain list of all of them against a streaming list
 *               (sendInitialEvents) of all of them, each on a fresh orchd: peak RSS growth and time.
 */
import { rm } from 'node:fs/promises';
import type { BenchContext, Scenario } from '../context.js';
import { ratio, startOrchd } from '../context.js';
import { errorNote } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { listReadCosts } from '../list-memory.js';
import { closedLoop } from '../load.js';
import { Orchd } from '../orchd.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { memory } from '../proc.js';
import { col, type Row, type ScenarioResult, type Table } from '../result.js';
import { seedEvents } from '../seed.js';

const CLIENTS = 64;
/** Lets the heap settle (lazy sweeping, pending writes) before RSS is read. */
const SETTLE_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function perObject(ctx: BenchContext): Promise<Table> {
  const n = ctx.opts.memoryObjects;
  const name = namer('m');
  const rows: Row[] = [];
  const notes: string[] = [];
  let { orchd, ready } = await startOrchd(ctx);
  const dataDir = orchd.dataDir;
  try {
    await sleep(SETTLE_MS);
    const empty = memory(orchd.pid)?.rss ?? NaN;
    rows.push({ state: 'empty, idle', objects: ready.objects, rss: empty, perObject: null });
    ctx.log(`memory: creating ${n.toLocaleString('en-US')} Events`);
    const http = new HttpClient(ready.url, CLIENTS);
    let k = 0;
    const r = await closedLoop(CLIENTS, { warmupMs: 0, durationMs: 300_000, maxOps: n }, async () =>
      expectStatus(await http.request('POST', eventsPath(), eventBytes(name(k), k++), { keep: 0 }), 201),
    );
    http.close();
    notes.push(...errorNote('creates', r));
    await sleep(SETTLE_MS);
    const afterCreates = memory(orchd.pid)?.rss ?? NaN;
    rows.push({ state: `after ${r.ops.toLocaleString('en-US')} creates over HTTP`, objects: ready.objects + r.ops, rss: afterCreates, perObject: (afterCreates - empty) / r.ops });
    await orchd.stop();
    ctx.log('memory: restarting (loads the checkpoint saved at shutdown)');
    ({ orchd, ready } = await startOrchd(ctx, dataDir));
    await sleep(SETTLE_MS);
    const afterRestart = memory(orchd.pid)?.rss ?? NaN;
    rows.push({ state: 'after a graceful restart', objects: ready.objects, rss: afterRestart, perObject: (afterRestart - empty) / r.ops });
  } finally {
    await orchd.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  notes.unshift(
    `RSS (VmRSS) of the orchd process ${SETTLE_MS} ms after each step; per object = (RSS − RSS of the empty server) / objects created. Objects: ~1 KB Events (~1.2 KB as stored JSON). V8 grows its heap in steps, so small N gives a coarse figure.`,
  );
  return {
    title: 'memory: resident memory per stored object',
    columns: [col('state', 'state', 'text'), col('objects', 'objects', 'int'), col('rss', 'RSS', 'bytes'), col('perObject', 'per object', 'bytes')],
    rows,
    notes,
  };
}

async function listReads(ctx: BenchContext): Promise<Table> {
  const rows: Row[] = [];
  for (const n of ctx.opts.streamListObjects) {
    const dataDir = await Orchd.newDataDir();
    try {
      ctx.log(`memory: seeding ${n.toLocaleString('en-US')} Events for the list reads`);
      await seedEvents(ctx.orchdCli, dataDir, n);
      ctx.log(`memory: a plain and a streaming list of ${n.toLocaleString('en-US')} Events, each on a fresh orchd`);
      const costs = await listReadCosts({ cli: ctx.orchdCli, dataDir, cpuProfDir: ctx.opts.cpuProf }, eventsPath());
      const plain = costs.find((c) => c.read === 'plain');
      for (const c of costs) {
        rows.push({
          objects: n,
          read: c.read,
          items: c.items,
          bytes: c.bytes,
          ms: c.ms,
          idleRss: c.idleRss,
          peakGrowth: c.peakGrowth,
          retained: c.retained,
          vsPlain: c === plain ? null : ratio(c.peakGrowth, plain?.peakGrowth),
        });
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return {
    title: 'memory: plain list vs streaming list of a whole collection',
    columns: [
      col('objects', 'stored', 'int'),
      col('read', 'read', 'text'),
      col('items', 'objects read', 'int'),
      col('bytes', 'bytes read', 'bytes'),
      col('ms', 'time ms', 'ms'),
      col('idleRss', 'idle RSS', 'bytes'),
      col('peakGrowth', 'peak RSS growth', 'bytes'),
      col('retained', 'left after', 'bytes'),
      col('vsPlain', 'growth / plain', 'ratio'),
    ],
    rows,
    notes: [
      'Each read runs alone on a fresh orchd over the same seeded log (bench/seed.ts: ~1 KB Events), so no read profits from what another cached. plain: GET of the whole collection, one answer. streaming: a watch with sendInitialEvents=true&resourceVersionMatch=NotOlderThan, read until the initial-events-end bookmark.',
      "The folder is served once first (system namespaces, a checkpoint), so each measured server loads the same checkpoint and is idle (its own CPU < 5 %) before its read. peak RSS growth: the server's peak RSS (VmHWM, reset through /proc/<pid>/clear_refs just before the read) minus its RSS just before; left after: its RSS once idle again after the read, minus the same figure. time: request to last object.",
    ],
  };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const tables = [await perObject(ctx), await listReads(ctx)];
  return { id: 'memory', title: memoryScenario.title, tables, plots: [], targets: [], elapsedMs: performance.now() - started };
}

export const memoryScenario: Scenario = { id: 'memory', title: 'Resident memory: per stored object, and a plain list vs a streaming list', run };
