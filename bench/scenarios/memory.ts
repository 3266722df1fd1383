/**
 * memory: resident memory per stored object. RSS of an idle empty orchd, then after N Events created
 * through the API, then after a graceful restart that loads them from the checkpoint.
 */
import { rm } from 'node:fs/promises';
import type { BenchContext, Scenario } from '../context.js';
import { startOrchd } from '../context.js';
import { errorNote } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop } from '../load.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { memory } from '../proc.js';
import { col, type Row, type ScenarioResult } from '../result.js';

const CLIENTS = 64;
/** Lets the heap settle (lazy sweeping, pending writes) before RSS is read. */
const SETTLE_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
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
    const r = await closedLoop(CLIENTS, { warmupMs: 0, durationMs: 300_000, maxOps: n }, async () => expectStatus(await http.request('POST', eventsPath(), eventBytes(name(k), k++), { keep: 0 }), 201));
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
    id: 'memory',
    title: memoryScenario.title,
    tables: [{ title: 'memory: resident memory per stored object', columns: [col('state', 'state', 'text'), col('objects', 'objects', 'int'), col('rss', 'RSS', 'bytes'), col('perObject', 'per object', 'bytes')], rows, notes }],
    plots: [],
    targets: [],
    elapsedMs: performance.now() - started,
  };
}

export const memoryScenario: Scenario = { id: 'memory', title: 'Resident memory per stored object', run };
