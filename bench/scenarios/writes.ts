/**
 * writes: Event creates over HTTP keep-alive at 1/16/64/256 clients (closed loop), each acknowledged
 * only once durable. Beside it: the bare node:http echo of the same body (HTTP ceiling), raw LevelDB
 * synced batches of as many entries as there are clients (storage ceiling), and etcd puts of the same
 * bytes with the same concurrency when comparing. Then updates (PUT) and merge patches of the Events
 * created, at the same concurrencies.
 */
import { bounds, ratio, startOrchd, withBareHttp, type BenchContext, type Scenario } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields, prefixed, timelinePlot, timelineSeries } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { leveldbCeiling } from '../peers/leveldb-ceiling.js';
import { batchStats, logCounters, stageCounters, stageMicros } from '../orchd-metrics.js';
import { memory } from '../proc.js';
import { col, type Plot, type Row, type ScenarioResult, type Series, type Table, type TargetCheck } from '../result.js';
import { STAGES } from '../../src/observability/stage-timing.js';

const TARGET_RATE = 5000;
const TARGET_CLIENTS = 64;
/** Events the update cells write to, created by the create cells (each write picks the next one). */
const UPDATE_POOL = 1000;

/** A change of an existing Event: a PUT of the whole object, or a merge patch of one annotation. */
type Change = 'update' | 'patch';
const CHANGES: Change[] = ['update', 'patch'];
const SENT_AT = 'bench.orch.io/sent-at';

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const { clients } = ctx.opts;
  const orchdRuns = new Map<number, RunResult>();
  const httpRuns = new Map<number, RunResult>();
  const etcdRuns = new Map<number, RunResult>();
  const gatewayRuns = new Map<number, RunResult>();
  const ceiling = new Map<number, number>();
  const batching = new Map<number, { meanBatch: number; meanSyncMs: number }>();
  const stages = new Map<number, Record<string, number>>();
  const changeRuns = new Map<Change, Map<number, RunResult>>(CHANGES.map((c) => [c, new Map()]));
  const pool: { name: string; i: number }[] = [];
  let stored: unknown;
  let peakRss = NaN;
  const name = namer('w');
  let n = 0;

  // The breakdown's counters cost two performance.now() calls per stage (~1 µs per create).
  const { orchd, ready } = await startOrchd(ctx, undefined, undefined, { ORCHD_STAGE_TIMING: '1' });
  try {
    for (const c of clients) {
      ctx.log(`writes: orchd, ${c} clients`);
      const http = new HttpClient(ready.url, c);
      const before = await logCounters(http);
      const stagesBefore = await stageCounters(http);
      orchdRuns.set(
        c,
        await closedLoop(
          c,
          bounds(ctx),
          async () => {
            const created = { name: name(n++), i: n };
            const res = await http.request('POST', eventsPath(), eventBytes(created.name, created.i));
            if (res.status === 201 && stored === undefined) stored = JSON.parse(res.body.toString('utf8'));
            if (res.status === 201 && pool.length < UPDATE_POOL) pool.push(created);
            return expectStatus(res, 201);
          },
          { orchd: orchd.pid },
        ),
      );
      batching.set(c, batchStats(before, await logCounters(http)));
      const stagesAfter = await stageCounters(http);
      stages.set(c, stageMicros(stagesBefore, stagesAfter, (stagesAfter.get('respond')?.count ?? 0) - (stagesBefore.get('respond')?.count ?? 0)));
      http.close();
    }
    for (const change of CHANGES) {
      for (const c of clients) {
        ctx.log(`writes: orchd ${change === 'update' ? 'updates (PUT)' : 'merge patches'}, ${c} clients`);
        const http = new HttpClient(ready.url, c);
        changeRuns.get(change)!.set(c, await closedLoop(c, bounds(ctx), () => changeOne(http, change, pool, n++), { orchd: orchd.pid }));
        http.close();
      }
    }
    peakRss = memory(orchd.pid)?.peakRss ?? NaN;
  } finally {
    await orchd.dispose();
  }

  if (ctx.opts.ceilings) {
    await withBareHttp(ctx, async (bare) => {
      for (const c of clients) {
        ctx.log(`writes: bare node:http echo, ${c} clients`);
        const http = new HttpClient(bare.url, c);
        httpRuns.set(c, await closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('POST', '/echo', eventBytes(name(n++), n)), 201), { http: bare.pid }));
        http.close();
      }
    });
    for (const c of clients) {
      ctx.log(`writes: raw LevelDB synced batches of ${c}`);
      ceiling.set(c, (await leveldbCeiling(c, bounds(ctx), stored ?? JSON.parse(eventBytes('x', 0).toString()))).entriesPerSec);
    }
  }

  if (ctx.etcd) {
    const etcd = ctx.etcd;
    for (const c of clients) {
      ctx.log(`writes: etcd puts, ${c} clients`);
      etcdRuns.set(
        c,
        await closedLoop(
          c,
          bounds(ctx),
          async () => {
            const key = `/registry/events.orch.io/events/default/${name(n++)}`;
            await etcd.client.put(key).value(eventBytes(key, n));
            return true;
          },
          { etcd: etcd.pid },
        ),
      );
    }
    // The same puts as JSON over HTTP/1.1 (etcd's grpc-gateway, keys and values base64): what a
    // client that speaks HTTP and JSON, as orchd's do, gets from etcd.
    for (const c of clients) {
      ctx.log(`writes: etcd puts through its JSON gateway, ${c} clients`);
      const http = new HttpClient(etcd.clientUrl, c);
      gatewayRuns.set(
        c,
        await closedLoop(
          c,
          bounds(ctx),
          async () => {
            const key = `/registry/events.orch.io/events/default/${name(n++)}`;
            const put = { key: Buffer.from(key).toString('base64'), value: eventBytes(key, n).toString('base64') };
            return expectStatus(await http.request('POST', '/v3/kv/put', Buffer.from(JSON.stringify(put))), 200);
          },
          { etcd: etcd.pid },
        ),
      );
      http.close();
    }
  }

  const rows: Row[] = clients.map((c) => {
    const o = orchdRuns.get(c)!;
    const e = etcdRuns.get(c);
    const h = httpRuns.get(c);
    const row: Row = { clients: c, ...orchdFields(o), ...batching.get(c) };
    if (e) Object.assign(row, prefixed('etcd', cellStats(e)), { etcdCpu: e.cpu.etcd, vsEtcd: ratio(o.throughput, e.throughput) });
    const g = gatewayRuns.get(c);
    if (g) Object.assign(row, { gatewayRate: g.throughput, vsGateway: ratio(o.throughput, g.throughput) });
    if (h) Object.assign(row, { httpRate: h.throughput, vsHttp: ratio(o.throughput, h.throughput) });
    if (ceiling.has(c)) Object.assign(row, { leveldbRate: ceiling.get(c)!, vsLeveldb: ratio(o.throughput, ceiling.get(c)) });
    return row;
  });

  const columns = [
    col('clients', 'clients', 'int'),
    ...orchdColumns('orchd creates/s'),
    col('meanBatch', 'records/batch', 'ms'),
    col('meanSyncMs', 'batch wait ms', 'ms'),
  ];
  if (ctx.etcd) {
    columns.push(col('etcdRate', 'etcd puts/s', 'rate'), col('etcdP50', 'etcd p50', 'ms'), col('etcdP99', 'etcd p99', 'ms'), col('etcdCpu', 'etcd CPU', 'pct'), col('vsEtcd', 'orchd/etcd', 'ratio'));
    columns.push(col('gatewayRate', 'etcd JSON gateway puts/s', 'rate'), col('vsGateway', 'orchd/gateway', 'ratio'));
  }
  if (ctx.opts.ceilings) {
    columns.push(col('httpRate', 'bare http echo/s', 'rate'), col('vsHttp', 'orchd/http', 'ratio'), col('leveldbRate', 'LevelDB entries/s', 'rate'), col('vsLeveldb', 'orchd/LevelDB', 'ratio'));
  }

  const notes = [
    `Each cell: ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured (at most ${ctx.opts.maxOps} operations); closed loop, one keep-alive connection per client.`,
    'A create is a POST of a ~1 KB Event, answered 201 only after its log batch is synced to disk. CPU: % of one core over the measured window (/proc/<pid>/stat, all threads); the load generator (client) runs on the same 2 cores.',
    'records/batch and batch wait: from orchd\'s /metrics over the cell (whole cell, warm-up included): records per synced LevelDB batch (group commit) and the mean time from a batch\'s first append to its durable sync.',
    `orchd peak RSS over the scenario: ${(peakRss / 2 ** 20).toFixed(0)} MiB.`,
    ...(ctx.opts.ceilings ? ['Ceilings: bare node:http POST /echo (read, JSON.parse, JSON.stringify, 201) in its own process with the same client; LevelDB: back-to-back synced chained batches of <clients> entries of the stored record\'s bytes, no HTTP.'] : []),
    ...(ctx.etcd ? [`${ctx.etcd.version}, single member on loopback, fsync on; etcd3 client (one gRPC channel) with the same concurrency and values; JSON gateway: POST /v3/kv/put of the same values (base64 in JSON) over one keep-alive connection per client.`] : []),
    ...clients.flatMap((c) => [...errorNote(`orchd ${c} clients`, orchdRuns.get(c)!), ...(etcdRuns.get(c) ? errorNote(`etcd ${c} clients`, etcdRuns.get(c)!) : []), ...(gatewayRuns.get(c) ? errorNote(`etcd gateway ${c} clients`, gatewayRuns.get(c)!) : []), ...(httpRuns.get(c) ? errorNote(`http ${c} clients`, httpRuns.get(c)!) : [])]),
  ];

  const throughput: Series[] = [{ name: 'orchd', points: clients.map((c) => [c, orchdRuns.get(c)!.throughput]) }];
  if (ctx.etcd) throughput.push({ name: 'etcd', points: clients.map((c) => [c, etcdRuns.get(c)!.throughput]) }, { name: 'etcd JSON gateway', points: clients.map((c) => [c, gatewayRuns.get(c)!.throughput]) });
  if (ctx.opts.ceilings) {
    throughput.push({ name: 'bare node:http', points: clients.map((c) => [c, httpRuns.get(c)!.throughput]) });
    throughput.push({ name: 'raw LevelDB', points: clients.map((c) => [c, ceiling.get(c)!]) });
  }
  const plots: Plot[] = [
    { title: 'Creates/s vs clients', kind: 'line', xLabel: 'clients', yLabel: 'operations/s', logX: true, logY: true, series: throughput },
    histogramPlot(
      'orchd create latency histogram',
      clients.map((c) => histogramSeries(`${c} clients`, orchdRuns.get(c)!.latency)),
    ),
    timelinePlot(
      'orchd create latency over time (p99 per bucket)',
      clients.map((c) => timelineSeries(`${c} clients`, orchdRuns.get(c)!.latency, orchdRuns.get(c)!.windowMs)),
    ),
  ];
  if (ctx.etcd) plots.push(histogramPlot('etcd put latency histogram', clients.map((c) => histogramSeries(`${c} clients`, etcdRuns.get(c)!.latency))));

  const targets: TargetCheck[] = [];
  const at = orchdRuns.get(TARGET_CLIENTS);
  targets.push({
    scenario: 'writes',
    name: `durable creates/s at ${TARGET_CLIENTS} clients`,
    target: `≥ ${TARGET_RATE.toLocaleString('en-US')}/s`,
    measured: at ? `${Math.round(at.throughput).toLocaleString('en-US')}/s` : 'not measured',
    met: at ? at.throughput >= TARGET_RATE : null,
  });
  const e64 = etcdRuns.get(TARGET_CLIENTS);
  if (at && e64) {
    const r = at.throughput / e64.throughput;
    targets.push({ scenario: 'writes', name: `creates vs etcd puts at ${TARGET_CLIENTS} clients`, target: '≥ 1.0×', measured: `${r.toFixed(2)}×`, met: r >= 1 });
  }
  const g64 = gatewayRuns.get(TARGET_CLIENTS);
  if (at && g64) {
    const r = at.throughput / g64.throughput;
    targets.push({ scenario: 'writes', name: `creates vs etcd JSON-gateway puts at ${TARGET_CLIENTS} clients (issue 19)`, target: '≥ 1.5×', measured: `${r.toFixed(2)}×`, met: r >= 1.5 });
  }

  for (const change of CHANGES) {
    const r = changeRuns.get(change)!.get(TARGET_CLIENTS);
    if (!r || !e64) continue;
    const x = r.throughput / e64.throughput;
    targets.push({ scenario: 'writes', name: `${change === 'update' ? 'updates (PUT)' : 'merge patches'} vs etcd puts at ${TARGET_CLIENTS} clients`, target: '≥ 1.0×', measured: `${x.toFixed(2)}×`, met: x >= 1 });
  }

  const tables = [{ title: 'writes: create Events over HTTP keep-alive', columns, rows, notes }, breakdown(clients, orchdRuns, stages), changes(clients, changeRuns, etcdRuns)];
  return { id: 'writes', title: writes.title, tables, plots, targets, elapsedMs: performance.now() - started };
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

/** Updates and merge patches of existing Events, beside etcd's puts of the same concurrency. */
function changes(clients: number[], runs: Map<Change, Map<number, RunResult>>, etcdRuns: Map<number, RunResult>): Table {
  const rows: Row[] = CHANGES.flatMap((change) =>
    clients.map((c) => {
      const r = runs.get(change)!.get(c)!;
      const e = etcdRuns.get(c);
      return { change: change === 'update' ? 'update (PUT)' : 'merge patch', clients: c, ...orchdFields(r), ...(e ? { etcdRate: e.throughput, vsEtcd: ratio(r.throughput, e.throughput) } : {}) };
    }),
  );
  const columns = [col('change', 'write', 'text'), col('clients', 'clients', 'int'), ...orchdColumns('orchd writes/s')];
  if (etcdRuns.size > 0) columns.push(col('etcdRate', 'etcd puts/s', 'rate'), col('vsEtcd', 'orchd/etcd', 'ratio'));
  const notes = [
    `Each write changes one of the first ${UPDATE_POOL} Events the create cells made (the next one each time, so concurrent writes rarely meet on one object): a PUT of the whole ~1 KB Event without resourceVersion, or a merge patch of its sent-at annotation; each answered 200 once durable. etcd: the create table's puts.`,
    ...clients.flatMap((c) => CHANGES.flatMap((change) => errorNote(`orchd ${change} ${c} clients`, runs.get(change)!.get(c)!))),
  ];
  return { title: 'writes: updates (PUT) and merge patches of existing Events', columns, rows, notes };
}

/**
 * µs per create in each stage (orchd's ORCHD_STAGE_TIMING counters over the cell, warm-up included,
 * divided by the creates answered), beside the server's whole request time and orchd's CPU per create.
 */
function breakdown(clients: number[], runs: Map<number, RunResult>, stages: Map<number, Record<string, number>>): Table {
  const rows: Row[] = clients.map((c) => {
    const us = stages.get(c) ?? {};
    const run = runs.get(c)!;
    const staged = STAGES.reduce((sum, s) => sum + (s === 'append' ? 0 : us[s] ?? 0), 0);
    return { clients: c, ...Object.fromEntries(STAGES.map((s) => [s, us[s]])), staged, request: us.request, cpu: (run.cpu.orchd / 100) * (1e6 / run.throughput) };
  });
  const columns = [
    col('clients', 'clients', 'int'),
    col('decode', 'decode', 'ms'),
    col('checks', 'checks', 'ms'),
    col('fieldManager', 'field manager', 'ms'),
    col('defaults', 'defaults', 'ms'),
    col('admission', 'admission', 'ms'),
    col('validation', 'validation', 'ms'),
    col('encode', 'encode', 'ms'),
    col('respond', 'respond', 'ms'),
    col('staged', 'sum (CPU stages)', 'ms'),
    col('append', 'append and sync wait', 'ms'),
    col('request', 'server request time', 'ms'),
    col('cpu', 'orchd CPU per create', 'ms'),
  ];
  const notes = [
    'µs per create. decode: the body\'s bytes to a JSON value (duplicate fields found); checks: apiVersion/kind, type and unknown-field checks; field manager: managedFields (and the defaults it applies first); defaults: system metadata, strategy and defaults, the namespace lookup; admission: mutating and validating admission (none configured here); validation: the kind\'s validation; encode: the log record (msgpack) and its place in the batch; respond: the 201\'s JSON and write.',
    'Stages are synchronous code but for admission (awaited: other requests may run in between) and append and sync wait (from the append until the batch is durable and the view applied it: a wait shared by the batch, not CPU).',
    'server request time: apiserver_request_duration_seconds for POST events (body reading, authentication, routing and the stages, waits included). orchd CPU per create: orchd\'s CPU over the measured window (all its threads, LevelDB\'s too) divided by the creates; the difference to the CPU stages is HTTP parsing, body reading, routing, authorization, the view\'s apply and the garbage collector.',
  ];
  return { title: 'writes: where a create\'s time goes (µs per create)', columns, rows, notes };
}

export const writes: Scenario = { id: 'writes', title: 'Creates (durable) over HTTP keep-alive', run };
