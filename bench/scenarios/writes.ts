/**
 * writes: Event creates over HTTP keep-alive at 1/16/64/256 clients (closed loop), each acknowledged
 * only once durable. Beside it: the bare node:http echo of the same body (HTTP ceiling), raw LevelDB
 * synced batches of as many entries as there are clients (storage ceiling), and etcd puts of the same
 * bytes with the same concurrency when comparing. Then updates (PUT) and merge patches of the Events
 * created, at the same concurrencies.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bounds, ratio, startOrchd, withBareHttp, type BenchContext, type Scenario } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields, prefixed, timelinePlot, timelineSeries } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { leveldbCeiling } from '../peers/leveldb-ceiling.js';
import { batchStats, logCounters, stageCounters, stageMicros } from '../orchd-metrics.js';
import { memory } from '../proc.js';
import { col, type Plot, type Row, type ScenarioResult, type Series } from '../result.js';
import { breakdown, changes, CHANGES, cpuPerOp, medianRatio, medianRun, roundsTable, targets, UPDATE_POOL, type Change } from './writes-tables.js';

/** Clients and time (in warm-ups: 5 s by default) of the unrecorded creates that let V8 compile orchd's hot paths before the first cell. */
const PRIME_CLIENTS = 64;
const PRIME_WARMUPS = 5;
const SENT_AT = 'bench.orch.io/sent-at';

const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => void (m.get(k) ?? m.set(k, []).get(k)!).push(v);

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const { clients, rounds } = ctx.opts;
  /** Every round of each system's cell, per client count: orchd's creates and etcd's gRPC and gateway puts, taken in turn. */
  const orchdRounds = new Map<number, RunResult[]>();
  const etcdRounds = new Map<number, RunResult[]>();
  const gatewayRounds = new Map<number, RunResult[]>();
  const httpRuns = new Map<number, RunResult>();
  const durableRuns = new Map<number, RunResult>();
  const ceiling = new Map<number, number>();
  const batching = new Map<number, { meanBatch: number; meanSyncMs: number }>();
  const stages = new Map<number, Record<string, number>>();
  const changeRuns = new Map<Change, Map<number, RunResult>>(CHANGES.map((c) => [c, new Map()]));
  const pool: { name: string; i: number }[] = [];
  let stored: unknown;
  let peakRss = NaN;
  const name = namer('w');
  let n = 0;
  const etcd = ctx.etcd;
  const primeMs = PRIME_WARMUPS * ctx.opts.warmupMs;

  // The breakdown's counters cost two performance.now() calls per stage (~1 µs per create).
  const { orchd, ready } = await startOrchd(ctx, undefined, undefined, { ORCHD_STAGE_TIMING: '1' });
  try {
    const http = new HttpClient(ready.url, Math.max(...clients, PRIME_CLIENTS));
    const create = async () => {
      const created = { name: name(n++), i: n };
      const res = await http.request('POST', eventsPath(), eventBytes(created.name, created.i));
      if (res.status === 201 && stored === undefined) stored = JSON.parse(res.body.toString('utf8'));
      if (res.status === 201 && pool.length < UPDATE_POOL) pool.push(created);
      return expectStatus(res, 201);
    };
    const gateway = etcd && new HttpClient(etcd.clientUrl, Math.max(...clients, PRIME_CLIENTS));
    const gatewayPut = async () => {
      const key = `/registry/events.orch.io/events/default/${name(n++)}`;
      const put = { key: Buffer.from(key).toString('base64'), value: eventBytes(key, n).toString('base64') };
      return expectStatus(await gateway!.request('POST', '/v3/kv/put', Buffer.from(JSON.stringify(put))), 200);
    };
    const grpcPut = async () => {
      const key = `/registry/events.orch.io/events/default/${name(n++)}`;
      await etcd!.client.put(key).value(eventBytes(key, n));
      return true;
    };
    // A fresh server runs its first thousands of requests in V8's interpreter while the compiler
    // threads work: the first cell would measure the JIT (half the CPU of a create at 1 client).
    ctx.log(`writes: priming orchd${etcd ? ' and etcd' : ''} (${PRIME_CLIENTS} clients, ${primeMs / 1000} s each, not recorded)`);
    await closedLoop(PRIME_CLIENTS, { warmupMs: primeMs, durationMs: 1, maxOps: 1 }, create);
    if (etcd) await closedLoop(PRIME_CLIENTS, { warmupMs: primeMs / 5, durationMs: 1, maxOps: 1 }, gatewayPut);
    for (const c of clients) {
      const before = await logCounters(http);
      const stagesBefore = await stageCounters(http);
      // Both servers stay up; each round measures orchd, then etcd through its gateway, then over gRPC.
      for (let r = 1; r <= rounds; r++) {
        ctx.log(`writes: round ${r}/${rounds}, ${c} clients: orchd creates${etcd ? ', etcd gateway puts, etcd gRPC puts' : ''}`);
        push(orchdRounds, c, await closedLoop(c, bounds(ctx), create, { orchd: orchd.pid }));
        if (!etcd) continue;
        push(gatewayRounds, c, await closedLoop(c, bounds(ctx), gatewayPut, { etcd: etcd.pid }));
        push(etcdRounds, c, await closedLoop(c, bounds(ctx), grpcPut, { etcd: etcd.pid }));
      }
      batching.set(c, batchStats(before, await logCounters(http)));
      const stagesAfter = await stageCounters(http);
      stages.set(c, stageMicros(stagesBefore, stagesAfter, (stagesAfter.get('respond')?.count ?? 0) - (stagesBefore.get('respond')?.count ?? 0)));
    }
    gateway?.close();
    for (const change of CHANGES) {
      for (const c of clients) {
        ctx.log(`writes: orchd ${change === 'update' ? 'updates (PUT)' : 'merge patches'}, ${c} clients`);
        changeRuns.get(change)!.set(c, await closedLoop(c, bounds(ctx), () => changeOne(http, change, pool, n++), { orchd: orchd.pid }));
      }
    }
    http.close();
    peakRss = memory(orchd.pid)?.peakRss ?? NaN;
  } finally {
    await orchd.dispose();
  }

  if (ctx.opts.ceilings) {
    const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-durable-'));
    try {
      await withBareHttp(ctx, dir, async (bare) => {
        const http = new HttpClient(bare.url, Math.max(...clients));
        for (const c of clients) {
          ctx.log(`writes: bare node:http echo, ${c} clients`);
          httpRuns.set(c, await closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('POST', '/echo', eventBytes(name(n++), n)), 201), { http: bare.pid }));
          ctx.log(`writes: bare node:http echo once in a synced LevelDB batch, ${c} clients`);
          durableRuns.set(c, await closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('POST', '/durable', eventBytes(name(n++), n)), 201), { http: bare.pid }));
        }
        http.close();
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    for (const c of clients) {
      ctx.log(`writes: raw LevelDB synced batches of ${c}`);
      ceiling.set(c, (await leveldbCeiling(c, bounds(ctx), stored ?? JSON.parse(eventBytes('x', 0).toString()))).entriesPerSec);
    }
  }

  const rows: Row[] = clients.map((c) => {
    const o = medianRun(orchdRounds.get(c)!);
    const e = etcdRounds.get(c) && medianRun(etcdRounds.get(c)!);
    const g = gatewayRounds.get(c) && medianRun(gatewayRounds.get(c)!);
    const h = httpRuns.get(c);
    const d = durableRuns.get(c);
    const row: Row = { clients: c, ...orchdFields(o), ...cpuPerOp(o, 'orchd', 'orchd'), ...batching.get(c) };
    if (e) Object.assign(row, prefixed('etcd', cellStats(e)), { etcdCpu: e.cpu.etcd, vsEtcd: medianRatio(orchdRounds.get(c)!, etcdRounds.get(c)!) });
    if (g) Object.assign(row, { gatewayRate: g.throughput, gatewayP50: cellStats(g).p50, ...cpuPerOp(g, 'etcd', 'gateway'), vsGateway: medianRatio(orchdRounds.get(c)!, gatewayRounds.get(c)!) });
    if (h) Object.assign(row, { httpRate: h.throughput, vsHttp: ratio(o.throughput, h.throughput) });
    if (d) Object.assign(row, { durableRate: d.throughput, durableP50: cellStats(d).p50, ...cpuPerOp(d, 'http', 'durable') });
    if (ceiling.has(c)) Object.assign(row, { leveldbRate: ceiling.get(c)!, vsLeveldb: ratio(o.throughput, ceiling.get(c)) });
    return row;
  });

  const columns = [
    col('clients', 'clients', 'int'),
    ...orchdColumns('orchd creates/s'),
    col('orchdCpuPerOp', 'orchd CPU per create ms', 'ms'),
    col('orchdMainPerOp', 'of it main thread ms', 'ms'),
    col('meanBatch', 'records/batch', 'ms'),
    col('meanSyncMs', 'batch wait ms', 'ms'),
  ];
  if (etcd) {
    columns.push(col('etcdRate', 'etcd puts/s', 'rate'), col('etcdP50', 'etcd p50', 'ms'), col('etcdP99', 'etcd p99', 'ms'), col('etcdCpu', 'etcd CPU', 'pct'), col('vsEtcd', 'orchd/etcd', 'ratio'));
    columns.push(
      col('gatewayRate', 'etcd JSON gateway puts/s', 'rate'),
      col('gatewayP50', 'gateway p50', 'ms'),
      col('gatewayCpuPerOp', 'etcd CPU per gateway put ms', 'ms'),
      col('vsGateway', 'orchd/gateway', 'ratio'),
    );
  }
  if (ctx.opts.ceilings) {
    columns.push(col('httpRate', 'bare http echo/s', 'rate'), col('vsHttp', 'orchd/http', 'ratio'), col('durableRate', 'bare durable echo/s', 'rate'), col('durableP50', 'durable echo p50', 'ms'));
    columns.push(
      col('durableCpuPerOp', 'CPU per durable echo ms', 'ms'),
      col('durableMainPerOp', 'of it main thread ms', 'ms'),
      col('leveldbRate', 'LevelDB entries/s', 'rate'),
      col('vsLeveldb', 'orchd/LevelDB', 'ratio'),
    );
  }

  const notes = [
    `Each cell: ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured (at most ${ctx.opts.maxOps} operations); closed loop, one keep-alive connection per client. Before the first cell orchd served ${primeMs / 1000} s of creates at ${PRIME_CLIENTS} clients, not recorded (its JIT compiled the hot paths).`,
    `Rounds: ${rounds} per client count${etcd ? ", orchd then etcd's gateway then its gRPC in each, both servers up throughout" : ''}; a row shows each system's median round (by rate), and orchd/etcd and orchd/gateway are the medians of the rounds' own ratios.`,
    'A create is a POST of a ~1 KB Event, answered 201 only after its log batch is synced to disk. CPU: % of one core over the measured window (/proc/<pid>/stat, all threads); CPU per create: that over the creates, and the part of it on the main (JavaScript) thread; the load generator (client) runs on the same 2 cores.',
    "records/batch and batch wait: from orchd's /metrics over all rounds of the client count (warm-ups included): records per synced LevelDB batch (group commit) and the mean time from a batch's first append to its durable sync.",
    `orchd peak RSS over the scenario: ${(peakRss / 2 ** 20).toFixed(0)} MiB.`,
    ...(ctx.opts.ceilings
      ? [
          "Ceilings: bare node:http POST /echo (read, JSON.parse, JSON.stringify, 201) in its own process with the same client; bare durable echo: the same, answered once the JSON is in a synced LevelDB chained batch shared by the appends of one turn of the event loop (orchd's group commit, nothing else of orchd): what a durable create costs in Node here at least; LevelDB: back-to-back synced chained batches of <clients> entries of the stored record's bytes, no HTTP.",
        ]
      : []),
    ...(etcd
      ? [
          `${etcd.version}, single member on loopback, fsync on; etcd3 client (one gRPC channel) with the same concurrency and values; JSON gateway: POST /v3/kv/put of the same values (base64 in JSON) over one keep-alive connection per client.`,
        ]
      : []),
    ...clients.flatMap((c) => [
      ...orchdRounds.get(c)!.flatMap((r, i) => errorNote(`orchd ${c} clients round ${i + 1}`, r)),
      ...(etcdRounds.get(c) ?? []).flatMap((r, i) => errorNote(`etcd ${c} clients round ${i + 1}`, r)),
      ...(gatewayRounds.get(c) ?? []).flatMap((r, i) => errorNote(`etcd gateway ${c} clients round ${i + 1}`, r)),
      ...(httpRuns.get(c) ? errorNote(`http ${c} clients`, httpRuns.get(c)!) : []),
      ...(durableRuns.get(c) ? errorNote(`durable echo ${c} clients`, durableRuns.get(c)!) : []),
    ]),
  ];

  const median = (m: Map<number, RunResult[]>, c: number) => medianRun(m.get(c)!);
  const throughput: Series[] = [{ name: 'orchd', points: clients.map((c) => [c, median(orchdRounds, c).throughput]) }];
  if (etcd)
    throughput.push(
      { name: 'etcd', points: clients.map((c) => [c, median(etcdRounds, c).throughput]) },
      { name: 'etcd JSON gateway', points: clients.map((c) => [c, median(gatewayRounds, c).throughput]) },
    );
  if (ctx.opts.ceilings) {
    throughput.push({ name: 'bare node:http', points: clients.map((c) => [c, httpRuns.get(c)!.throughput]) });
    throughput.push({ name: 'bare durable echo', points: clients.map((c) => [c, durableRuns.get(c)!.throughput]) });
    throughput.push({ name: 'raw LevelDB', points: clients.map((c) => [c, ceiling.get(c)!]) });
  }
  const plots: Plot[] = [
    { title: 'Creates/s vs clients', kind: 'line', xLabel: 'clients', yLabel: 'operations/s', logX: true, logY: true, series: throughput },
    histogramPlot(
      'orchd create latency histogram (median round)',
      clients.map((c) => histogramSeries(`${c} clients`, median(orchdRounds, c).latency)),
    ),
    timelinePlot(
      'orchd create latency over time (p99 per bucket, median round)',
      clients.map((c) => timelineSeries(`${c} clients`, median(orchdRounds, c).latency, median(orchdRounds, c).windowMs)),
    ),
  ];
  if (etcd)
    plots.push(
      histogramPlot(
        'etcd put latency histogram (median round)',
        clients.map((c) => histogramSeries(`${c} clients`, median(etcdRounds, c).latency)),
      ),
    );

  const tables = [
    { title: 'writes: create Events over HTTP keep-alive', columns, rows, notes },
    roundsTable(clients, orchdRounds, gatewayRounds, etcdRounds),
    breakdown(clients, orchdRounds, stages),
    changes(clients, changeRuns, etcdRounds),
  ];
  return { id: 'writes', title: writes.title, tables, plots, targets: targets(orchdRounds, gatewayRounds, etcdRounds, changeRuns), elapsedMs: performance.now() - started };
}

/** One write to an existing Event of the pool: every one changes its sent-at annotation, so none is a no-op. */
async function changeOne(http: HttpClient, change: Change, pool: readonly { name: string; i: number }[], i: number): Promise<boolean> {
  const target = pool[i % pool.length];
  const path = `${eventsPath()}/${target.name}`;
  // The Event as created (what it regards cannot change) with a new sent-at annotation.
  if (change === 'update') return expectStatus(await http.request('PUT', path, eventBytes(target.name, target.i, i)), 200);
  const patch = Buffer.from(JSON.stringify({ metadata: { annotations: { [SENT_AT]: String(i) } } }));
  return expectStatus(await http.request('PATCH', path, patch, { contentType: 'application/merge-patch+json' }), 200);
}

export const writes: Scenario = { id: 'writes', title: 'Creates (durable) over HTTP keep-alive', run };
