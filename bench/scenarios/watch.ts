/**
 * watch: watch fan-out against the machine's own limit. Watchers live in child processes reading raw
 * sockets (bench/watch-client.ts); a writer creates Events at a fixed rate. Each orchd cell has a
 * bare fan-out peer cell of the same shape (bench/peers/fanout-server.ts: a plain node:http server
 * writing the same pre-encoded lines, batched per event-loop turn, to the same sockets), so every row
 * shows orchd/peer. Shapes: broadcast (every watcher on one namespace: each write reaches all), and
 * the kubelet pattern (each watcher on its own namespace, then each on its own regarding.name field
 * selector in one namespace: each write reaches one). Delivery latency is from the writer sending the
 * create to a watcher reading its event, on the machine's shared clock, sampled every 20th event.
 * With --compare etcd, etcd watchers (in this process) are measured at the broadcast sizes too.
 */
import type { BenchContext, Scenario } from '../context.js';
import { bounds, ratio, startOrchd } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries } from '../cells.js';
import { Child } from '../child.js';
import { fixedRate, type RunResult, type Watched } from '../load.js';
import { eventBytes, namer } from '../payload.js';
import { LatencyLog } from '../stats.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { CATCH_UP, catchUpCells, type CatchUpCell } from '../watch-catchup.js';
import { benchScript, createNamespaces, eventsVersion, fanoutCell, watchPathFor, type FanoutCell, type FanoutServer, type WatchShape } from '../watch-fanout.js';

/** Issue 15's targets, each against the peer in the same run. */
const BROADCAST = { watchers: 1000, rate: 1000, p99: 100, vsPeer: 0.7 };
const SELECTIVE = { watchers: 10_000, base: 100, rate: 1000, p99: 50, delivered: 0.9, cpuGrowth: 1.2, baseCpuMs: 0.3 };
/** How long after the last write the etcd watchers may take to catch up before an event counts as missing. */
const DRAIN_MS = 5000;

/** Which writes were sent when, and how many deliveries of them were seen. */
class Deliveries {
  readonly latency = new LatencyLog();
  delivered = 0;
  private sentAt: Float64Array;
  private measured: Uint8Array;
  measuredWrites = 0;

  constructor(
    capacity: number,
    private readonly t0: number,
  ) {
    this.sentAt = new Float64Array(capacity);
    this.measured = new Uint8Array(capacity);
  }

  sent(i: number, at: number, measured: boolean): void {
    if (i >= this.sentAt.length) return;
    this.sentAt[i] = at;
    this.measured[i] = measured ? 1 : 0;
  }

  acked(i: number): void {
    if (i < this.measured.length && this.measured[i]) this.measuredWrites++;
  }

  seen(i: number, now: number): void {
    if (i >= this.sentAt.length || !this.measured[i]) return;
    this.delivered++;
    this.latency.add(now - this.t0, now - this.sentAt[i]);
  }
}

/** An etcd cell: its watchers in this process (etcd's gRPC client). */
interface WatchCell {
  watchers: number;
  write: RunResult & { skipped: number };
  d: Deliveries;
  expected: number;
  serverCpu: number;
}

/**
 * The writer of a cell (fixed rate, at most 64 in flight, each write timed for delivery latency),
 * then a wait of at most DRAIN_MS for the watchers to see every measured write.
 */
async function writeAndDrain(ctx: BenchContext, d: Deliveries, t0: number, watchers: number, put: (i: number) => Promise<unknown>, watched: Watched) {
  const write = await fixedRate(
    ctx.opts.watchRate,
    64,
    bounds(ctx),
    async (_c, i) => {
      const start = performance.now();
      d.sent(i, start, start >= t0);
      await put(i);
      d.acked(i);
      return true;
    },
    watched,
  );
  const deadline = performance.now() + DRAIN_MS;
  while (d.delivered < d.measuredWrites * watchers && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return write;
}

async function etcdCell(ctx: BenchContext, watchers: number): Promise<WatchCell> {
  const etcd = ctx.etcd!;
  const name = namer('bw');
  const prefix = `/registry/bench-watch/${name(0).slice(0, -2)}/`;
  const b = bounds(ctx);
  const capacity = Math.ceil((ctx.opts.watchRate * (b.warmupMs + b.durationMs)) / 1000) + 100;
  const t0 = performance.now() + b.warmupMs;
  const d = new Deliveries(capacity, t0);
  ctx.log(`watch: etcd, opening ${watchers} watches`);
  const ws = await Promise.all(Array.from({ length: watchers }, () => etcd.client.watch().prefix(prefix).create()));
  try {
    for (const w of ws) {
      w.on('put', (kv) => {
        const key = kv.key.toString('latin1');
        d.seen(Number(key.slice(key.lastIndexOf('/') + 1)), performance.now());
      });
    }
    ctx.log(`watch: etcd, ${watchers} watchers, ${ctx.opts.watchRate} puts/s`);
    const write = await writeAndDrain(ctx, d, t0, watchers, async (i) => await etcd.client.put(prefix + i).value(eventBytes(name(i), i)), { etcd: etcd.pid });
    return { watchers, write, d, expected: d.measuredWrites * watchers, serverCpu: write.cpu.etcd ?? NaN };
  } finally {
    await Promise.all(ws.map((w) => w.cancel().catch(() => undefined)));
  }
}

/** orchd as a fan-out server: a fresh one per cell; a `namespaces` cell first creates its namespaces. */
async function withOrchd<T>(ctx: BenchContext, fn: (s: FanoutServer) => Promise<T>, args?: string[]): Promise<T> {
  const { orchd, ready } = await startOrchd(ctx, undefined, args);
  try {
    return await fn({
      system: 'orchd',
      url: ready.url,
      pid: orchd.pid,
      async prepare(shape, watchers) {
        if (shape === 'namespaces') await createNamespaces(ready.url, watchers);
        const rv = await eventsVersion(ready.url);
        return { watchPath: (k) => watchPathFor(shape, k, rv) };
      },
    });
  } finally {
    await orchd.dispose();
  }
}

async function withPeer<T>(ctx: BenchContext, fn: (s: FanoutServer) => Promise<T>): Promise<T> {
  const child = Child.start('fanout-peer', process.execPath, [benchScript(ctx, 'peers/fanout-server.js')]);
  try {
    const line = await child.waitForLine((l) => l.includes('"msg":"ready"'), 15_000);
    const url = (JSON.parse(line) as { url: string }).url;
    return await fn({ system: 'peer', url, pid: child.pid, prepare: async (shape) => ({ watchPath: (k) => watchPathFor(shape, k, '') }) });
  } finally {
    await child.stop('SIGTERM', 2000);
  }
}

const SHAPE_TITLES: Record<WatchShape, string> = { broadcast: 'one namespace', namespaces: 'own namespace each', field: 'own regarding.name each' };
const deliveriesPerSec = (c: FanoutCell) => (c.delivered * 1000) / c.spanMs;
/** Server CPU per acknowledged write, ms. */
const cpuPerWrite = (c: FanoutCell) => (c.write.throughput > 0 ? (c.serverCpu / 100) * (1000 / c.write.throughput) : NaN);

/** Over 80 lines: the cells, then one row per cell and its columns and notes, read top to bottom as the table reads. */
async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const cells: FanoutCell[] = [];
  const etcdCells: WatchCell[] = [];
  const failures: string[] = [];
  // A cell that fails (a server that cannot take that many watches in time) is a note, not the end of the run.
  const pair = async (shape: WatchShape, watchers: number, transport: FanoutCell['transport']) => {
    try {
      const orchd = await withOrchd(ctx, (s) => fanoutCell(ctx, s, shape, watchers, transport));
      const peer = await withPeer(ctx, (s) => fanoutCell(ctx, s, shape, watchers, transport));
      cells.push(orchd, peer);
    } catch (err) {
      failures.push(`${shape}, ${watchers} ${transport} watchers: not measured (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
    }
  };
  for (const w of ctx.opts.watchers) {
    for (const t of ctx.opts.watchTransports) await pair('broadcast', w, t);
    if (ctx.etcd) etcdCells.push(await etcdCell(ctx, w));
  }
  for (const w of ctx.opts.watchSelective) for (const shape of ['namespaces', 'field'] as const) await pair(shape, w, 'http');
  // One stalled watcher among the largest broadcast: against the same run without it.
  const stallWatchers = Math.max(...ctx.opts.watchers);
  const stallArgs = ['--watch-stall-timeout', `${STALL_TIMEOUT_S}s`];
  let stallCells: FanoutCell[] = [];
  try {
    stallCells = [
      await withOrchd(ctx, (s) => fanoutCell(ctx, s, 'broadcast', stallWatchers, 'http'), stallArgs),
      await withOrchd(ctx, (s) => fanoutCell(ctx, s, 'broadcast', stallWatchers, 'http', { stalled: true }), stallArgs),
    ];
  } catch (err) {
    failures.push(`stalled watcher cells: not measured (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
  }

  // Ten catch-up watches replaying their history beside live watchers: against the same cell without them.
  let catchUps: CatchUpCell[] = [];
  if (ctx.opts.watchCatchUpMb > 0) {
    try {
      catchUps = await catchUpCells(ctx, ctx.opts.watchCatchUpMb);
    } catch (err) {
      failures.push(`catch-up cells: not measured (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
    }
  }

  const peerOf = (c: FanoutCell) => cells.find((x) => x.system === 'peer' && x.shape === c.shape && x.watchers === c.watchers && x.transport === c.transport);
  const rows: Row[] = cells.map((c) => {
    const s = cellStats({ throughput: 0, latency: c.latency, errors: 0 });
    const peer = c.system === 'orchd' ? peerOf(c) : undefined;
    return {
      system: c.system,
      shape: SHAPE_TITLES[c.shape],
      transport: c.transport === 'http' ? 'chunked HTTP' : 'WebSocket',
      watchers: c.watchers,
      writes: c.write.throughput,
      delivered: deliveriesPerSec(c),
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      missing: c.expected - c.delivered,
      ended: c.ended,
      serverCpu: c.serverCpu,
      cpuPerWrite: cpuPerWrite(c),
      generatorCpu: c.generatorCpu,
      peakRss: c.peakRss,
      vsPeerDelivered: peer ? ratio(deliveriesPerSec(c), deliveriesPerSec(peer)) : null,
      vsPeerP99: peer ? ratio(s.p99, cellStats({ throughput: 0, latency: peer.latency, errors: 0 }).p99) : null,
    };
  });
  const columns = [
    col('system', 'system', 'text'),
    col('shape', 'watchers watch', 'text'),
    col('transport', 'transport', 'text'),
    col('watchers', 'watchers', 'int'),
    col('writes', 'writes/s', 'rate'),
    col('delivered', 'events delivered/s', 'rate'),
    col('p50', 'delivery p50 ms', 'ms'),
    col('p99', 'delivery p99 ms', 'ms'),
    col('max', 'delivery max ms', 'ms'),
    col('missing', 'missing', 'int'),
    col('ended', 'watches ended', 'int'),
    col('serverCpu', 'server CPU', 'pct'),
    col('cpuPerWrite', 'server CPU ms/write', 'ms'),
    col('generatorCpu', 'generator CPU', 'pct'),
    col('peakRss', 'server peak RSS', 'bytes'),
    col('vsPeerDelivered', 'delivered/s orchd/peer', 'ratio'),
    col('vsPeerP99', 'p99 orchd/peer', 'ratio'),
  ];
  const notes = [
    `Writer: ${ctx.opts.watchRate} creates/s, open loop (at most 64 in flight), ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured. Watchers: in 4 child processes reading raw sockets into one buffer each (net onread: no Buffer or stream event per read), counting events by newline or frame header without parsing them; generator CPU is theirs and the writer's, % of one core.`,
    "peer: a bare node:http fan-out server (bench/peers/fanout-server.ts) given the same writes: it encodes each once and writes it, batched per event-loop turn, to the sockets watching its namespace or regarding.name — the machine's limit for this shape. orchd/peer compares the two in the same run.",
    'events delivered/s: every event the watchers read, over the time from the first write to the end of the drain; missing: expected deliveries (acknowledged writes × watchers each reaches) not read within 3 s after the last write.',
    ...cells.flatMap((c) => errorNote(`${c.system} writer, ${c.shape}, ${c.watchers} ${c.transport} watchers`, c.write)),
    ...failures,
    ...cells
      .filter((c) => c.ended > 0)
      .map((c) => `${c.system}, ${c.shape}, ${c.watchers} watchers: ${c.ended} watches ended early${c.endedTail ? ` (last bytes: ${JSON.stringify(c.endedTail.slice(-160))})` : ''}`),
  ];
  const tables = [{ title: 'watch: fan-out against the bare fan-out peer', columns, rows, notes }];
  if (stallCells.length === 2) tables.push(stallTable(stallCells));
  if (catchUps.length === 3) tables.push(catchUpTable(ctx, catchUps));
  if (etcdCells.length > 0) tables.push(etcdTable(etcdCells));

  const broadcastPlot = {
    title: 'Watch broadcast: events delivered/s vs watchers',
    kind: 'line' as const,
    xLabel: 'watchers',
    yLabel: 'events delivered/s',
    logX: true,
    series: (['orchd', 'peer'] as const).flatMap((sys) =>
      ctx.opts.watchTransports.map((t) => ({
        name: `${sys}, ${t}`,
        points: cells.filter((c) => c.system === sys && c.shape === 'broadcast' && c.transport === t).map((c) => [c.watchers, deliveriesPerSec(c)] as [number, number]),
      })),
    ),
  };
  return {
    id: 'watch',
    title: watch.title,
    tables,
    plots: [
      histogramPlot(
        'Watch delivery latency',
        cells.map((c) => histogramSeries(`${c.system}, ${SHAPE_TITLES[c.shape]}, ${c.watchers} ${c.transport}`, c.latency)),
      ),
      broadcastPlot,
    ],
    targets: [...targets(ctx, cells, peerOf), ...catchUpTargets(ctx, catchUps)],
    elapsedMs: performance.now() - started,
  };
}

function targets(ctx: BenchContext, cells: FanoutCell[], peerOf: (c: FanoutCell) => FanoutCell | undefined): TargetCheck[] {
  const p99 = (c: FanoutCell) => cellStats({ throughput: 0, latency: c.latency, errors: 0 }).p99;
  const out: TargetCheck[] = [];
  for (const t of ctx.opts.watchTransports) {
    const c = cells.find((x) => x.system === 'orchd' && x.shape === 'broadcast' && x.transport === t && x.watchers === BROADCAST.watchers);
    const peer = c && peerOf(c);
    const ok = c && peer && ctx.opts.watchRate >= BROADCAST.rate;
    out.push({
      scenario: 'watch',
      name: `broadcast, ${BROADCAST.watchers} ${t} watchers at ${BROADCAST.rate} writes/s: delivered/s vs the peer; p99 (or within 2x the peer's)`,
      target: `>= ${BROADCAST.vsPeer}x; < ${BROADCAST.p99} ms or <= 2x peer`,
      measured: ok
        ? `${(deliveriesPerSec(c) / deliveriesPerSec(peer)).toFixed(2)}x; ${p99(c).toFixed(1)} ms (peer ${p99(peer).toFixed(1)} ms)`
        : 'not at that size (--watchers 1000 --watch-rate 1000)',
      met: ok ? deliveriesPerSec(c) >= BROADCAST.vsPeer * deliveriesPerSec(peer) && (p99(c) < BROADCAST.p99 || p99(c) <= 2 * p99(peer)) : null,
    });
  }
  for (const shape of ['namespaces', 'field'] as const) {
    const big = cells.find((x) => x.system === 'orchd' && x.shape === shape && x.watchers === SELECTIVE.watchers);
    const base = cells.find((x) => x.system === 'orchd' && x.shape === shape && x.watchers === SELECTIVE.base);
    const ok = big && base && ctx.opts.watchRate >= SELECTIVE.rate;
    const got = big ? big.write.throughput / ctx.opts.watchRate : NaN;
    const growth = big && base ? cpuPerWrite(big) / cpuPerWrite(base) : NaN;
    out.push({
      scenario: 'watch',
      name: `selective (${SHAPE_TITLES[shape]}), ${SELECTIVE.watchers} watchers at ${SELECTIVE.rate} writes/s: writes through, p99, CPU/write vs ${SELECTIVE.base} watchers (and that base)`,
      target: `>= ${SELECTIVE.delivered * 100} %, < ${SELECTIVE.p99} ms, <= ${SELECTIVE.cpuGrowth}x, base < ${SELECTIVE.baseCpuMs} ms`,
      measured: ok
        ? `${(got * 100).toFixed(0)} %, ${p99(big).toFixed(1)} ms, ${growth.toFixed(2)}x, base ${cpuPerWrite(base).toFixed(2)} ms`
        : `not at that size (--watch-selective ${SELECTIVE.base},${SELECTIVE.watchers} --watch-rate 1000)`,
      met: ok ? got >= SELECTIVE.delivered && p99(big) < SELECTIVE.p99 && growth <= SELECTIVE.cpuGrowth && cpuPerWrite(base) < SELECTIVE.baseCpuMs : null,
    });
  }
  return out;
}

/** Seconds a watcher may stay behind in the stalled-watcher cells (so a short run sees it ended). */
const STALL_TIMEOUT_S = 2;

function stallTable([without, withStalled]: FanoutCell[]) {
  const p99 = (c: FanoutCell) => cellStats({ throughput: 0, latency: c.latency, errors: 0 }).p99;
  const row = (c: FanoutCell, label: string) => ({
    run: label,
    watchers: c.watchers,
    writes: c.write.throughput,
    p99: p99(c),
    missing: c.expected - c.delivered,
    peakRss: c.peakRss,
    ended: c.stalledEnded === undefined ? '–' : c.stalledEnded ? 'yes' : 'no',
  });
  return {
    title: `watch: one stalled watcher among ${without!.watchers} (orchd, --watch-stall-timeout ${STALL_TIMEOUT_S}s)`,
    columns: [
      col('run', 'run', 'text'),
      col('watchers', 'reading watchers', 'int'),
      col('writes', 'writes/s', 'rate'),
      col('p99', 'delivery p99 ms', 'ms'),
      col('missing', 'missing', 'int'),
      col('peakRss', 'server peak RSS', 'bytes'),
      col('ended', 'stalled one ended', 'text'),
    ],
    rows: [row(without!, 'without'), row(withStalled!, 'with one stalled')],
    notes: [
      `The stalled watcher is a socket of the harness that never reads. Targets: the others' p99 changes < 10 %; it is ended after the timeout; server RSS within 50 MiB of the run without it. Here: p99 ${((p99(withStalled!) / p99(without!) - 1) * 100).toFixed(0)} %, RSS ${((withStalled!.peakRss - without!.peakRss) / 2 ** 20).toFixed(0)} MiB.`,
    ],
  };
}

const catchUpP99 = (c: CatchUpCell) => cellStats({ throughput: 0, latency: c.live.latency, errors: 0 }).p99;
const addedRss = (c: CatchUpCell) => c.rssMax - c.rssBefore;
/** Peak server RSS over the cell without catch-ups (same history, same live load): what the catch-ups cost, start-up settling aside. */
const overWithout = (c: CatchUpCell, without: CatchUpCell) => c.rssMax - without.rssMax;

function catchUpTable(ctx: BenchContext, cells: CatchUpCell[]) {
  const [without, , withCatchUps] = cells;
  return {
    title: `watch: ${CATCH_UP.watches} catch-up watches replaying ~${ctx.opts.watchCatchUpMb} MB each, beside ${without!.live.watchers} live watchers (orchd)`,
    columns: [
      col('watches', 'catch-up watches', 'int'),
      col('writes', 'live writes/s', 'rate'),
      col('p99', 'live delivery p99 ms', 'ms'),
      col('missing', 'live missing', 'int'),
      col('replayed', 'replayed per catch-up watch', 'bytes'),
      col('catchUpMs', 'all caught up after ms', 'ms'),
      col('rssBefore', 'server RSS before', 'bytes'),
      col('added', 'server RSS added (max)', 'bytes'),
      col('overWithout', 'peak RSS over no catch-ups', 'bytes'),
    ],
    rows: cells.map((c) => ({
      watches: c.watches,
      writes: c.live.write.throughput,
      p99: catchUpP99(c),
      missing: c.live.expected - c.live.delivered,
      replayed: c.bytesPerWatch,
      catchUpMs: c.catchUpMs,
      rssBefore: c.rssBefore,
      added: addedRss(c),
      overWithout: overWithout(c, without!),
    })),
    notes: [
      `Both cells on one seeded history (Events appended through orchd's log) and a fresh orchd each; the catch-up watches (none, one, ten) start after the warm-up, from resourceVersion 1, reading as fast as they can in one child process. RSS sampled every 100 ms from their start (or the same moment without them) to the end of the drain; a fresh server's RSS still grows after its start-up replay, so what the catch-ups add is the peak over the cell without them. Live p99 with ten/without: ${((catchUpP99(withCatchUps!) / catchUpP99(without!) - 1) * 100).toFixed(0)} %.`,
    ],
  };
}

function catchUpTargets(ctx: BenchContext, cells: CatchUpCell[]): TargetCheck[] {
  const [without, , withCatchUps] = cells;
  const full = ctx.opts.watchCatchUpMb >= 60 && without && withCatchUps;
  return [
    {
      scenario: 'watch',
      name: `${CATCH_UP.watches} catch-up watches of 60 MB each: server memory added; live p99 against the run without them`,
      target: `< ${CATCH_UP.addedBytes / 2 ** 20} MiB; <= ${CATCH_UP.p99Growth}x`,
      measured: full
        ? `${(overWithout(withCatchUps, without) / 2 ** 20).toFixed(0)} MiB; ${(catchUpP99(withCatchUps) / catchUpP99(without)).toFixed(2)}x (${catchUpP99(withCatchUps).toFixed(1)} vs ${catchUpP99(without).toFixed(1)} ms)`
        : 'not at that size (--watch-catch-up 60)',
      met: full ? overWithout(withCatchUps, without) < CATCH_UP.addedBytes && catchUpP99(withCatchUps) <= CATCH_UP.p99Growth * catchUpP99(without) : null,
    },
  ];
}

function etcdTable(cells: WatchCell[]) {
  return {
    title: 'watch: etcd watchers (in the harness process) at the broadcast sizes',
    columns: [col('watchers', 'watchers', 'int'), col('writes', 'writes/s', 'rate'), col('p99', 'delivery p99 ms', 'ms'), col('missing', 'missing', 'int'), col('serverCpu', 'etcd CPU', 'pct')],
    rows: cells.map((c) => ({
      watchers: c.watchers,
      writes: c.write.throughput,
      p99: cellStats({ throughput: 0, latency: c.d.latency, errors: 0 }).p99,
      missing: c.expected - c.d.delivered,
      serverCpu: c.serverCpu,
    })),
    notes: ['etcd watchers run in the harness process (its gRPC client), so they are not measured like the rows above.'],
  };
}

export const watch: Scenario = { id: 'watch', title: 'Watch fan-out: delivery against the bare fan-out peer', run };
