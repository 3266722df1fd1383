/**
 * watch: N watchers on the Events of one namespace while a writer creates Events at a fixed rate;
 * every watcher should see every create. Delivery latency is measured from the moment the writer
 * sent the create to the moment a watcher read the event (an upper bound of commit → client: the
 * commit happens in between), so the write latency is shown beside it. orchd's watchers watch over
 * chunked HTTP and over WebSockets (--watch-transports), the same counts side by side.
 */
import { request, Agent } from 'node:http';
import WebSocket from 'ws';
import type { BenchContext, Scenario } from '../context.js';
import { bounds, ratio, startOrchd } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { fixedRate, type RunResult, type Watched } from '../load.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import type { WatchTransport } from '../options.js';
import { LatencyLog } from '../stats.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';

const TARGET = { watchers: 10_000, rate: 1000, p99: 100 };
/** How long after the last write the watchers may take to catch up before an event counts as missing. */
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

/** Index i of a write named `<prefix>-<run>-<i>`, found in a JSON line without parsing it. */
function indexIn(line: string, marker: string): number {
  const at = line.indexOf(marker);
  if (at < 0) return -1;
  let i = 0;
  for (let k = at + marker.length; k < line.length; k++) {
    const d = line.charCodeAt(k) - 48;
    if (d < 0 || d > 9) break;
    i = i * 10 + d;
  }
  return i;
}

/** A watch the harness opened; close() drops its connection. */
interface OpenWatch {
  close(): void;
}

const TRANSPORT_TITLES: Record<WatchTransport | 'grpc', string> = { http: 'chunked HTTP', websocket: 'WebSocket', grpc: 'gRPC' };

/** A chunked HTTP watch: events arrive as lines, a chunk may hold several or part of one. */
function httpWatch(agent: Agent, base: URL, path: string, onLine: (line: string, now: number) => void): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, path, headers: { accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let rest = '';
      res.on('data', (chunk: string) => {
        const now = performance.now();
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) onLine(line, now);
      });
      res.on('error', () => undefined);
      resolve({ close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A WebSocket watch: one event per message, as orchd (and Kubernetes) frames them. */
function webSocketWatch(base: URL, path: string, onLine: (line: string, now: number) => void): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${base.host}${path}`);
    ws.on('message', (data: Buffer) => onLine(data.toString('utf8'), performance.now()));
    ws.once('open', () => resolve({ close: () => ws.terminate() }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`watch upgrade answered ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

interface WatchCell {
  system: 'orchd' | 'etcd';
  transport: WatchTransport | 'grpc';
  watchers: number;
  write: RunResult & { skipped: number };
  d: Deliveries;
  expected: number;
  serverCpu: number;
  peakRss: number;
}

async function orchdCell(ctx: BenchContext, watchers: number, transport: WatchTransport): Promise<WatchCell> {
  const { orchd, ready } = await startOrchd(ctx);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const streams: OpenWatch[] = [];
  try {
    const http = new HttpClient(ready.url, 64);
    const list = await http.request('GET', `${eventsPath()}?limit=1`);
    expectStatus(list, 200);
    const rv = (JSON.parse(list.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const name = namer('bw');
    const marker = `"name":"${name(0).slice(0, -1)}`;
    const b = bounds(ctx);
    const capacity = Math.ceil((ctx.opts.watchRate * (b.warmupMs + b.durationMs)) / 1000) + 100;
    const t0 = performance.now() + b.warmupMs;
    const d = new Deliveries(capacity, t0);
    ctx.log(`watch: orchd, opening ${watchers} ${TRANSPORT_TITLES[transport]} watches`);
    const base = new URL(ready.url);
    const path = `${eventsPath()}?watch=1&resourceVersion=${rv}`;
    const onLine = (line: string, now: number) => {
      const i = indexIn(line, marker);
      if (i >= 0) d.seen(i, now);
    };
    await Promise.all(
      Array.from({ length: watchers }, async () => {
        streams.push(await (transport === 'http' ? httpWatch(agent, base, path, onLine) : webSocketWatch(base, path, onLine)));
      }),
    );
    ctx.log(`watch: orchd, ${watchers} ${TRANSPORT_TITLES[transport]} watchers, ${ctx.opts.watchRate} creates/s`);
    const write = await writeAndDrain(ctx, d, t0, watchers, async (i) => expectStatus(await http.request('POST', eventsPath(), eventBytes(name(i), i), { keep: 0 }), 201), { orchd: orchd.pid });
    http.close();
    return { system: 'orchd', transport, watchers, write, d, expected: d.measuredWrites * watchers, serverCpu: write.cpu.orchd, peakRss: write.peakRss.orchd };
  } finally {
    for (const s of streams) s.close();
    agent.destroy();
    await orchd.dispose();
  }
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
    return { system: 'etcd', transport: 'grpc', watchers, write, d, expected: d.measuredWrites * watchers, serverCpu: write.cpu.etcd, peakRss: write.peakRss.etcd };
  } finally {
    await Promise.all(ws.map((w) => w.cancel().catch(() => undefined)));
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const cells: WatchCell[] = [];
  for (const w of ctx.opts.watchers) {
    for (const t of ctx.opts.watchTransports) cells.push(await orchdCell(ctx, w, t));
    if (ctx.etcd) cells.push(await etcdCell(ctx, w));
  }
  const delivery = (c: WatchCell) => cellStats({ throughput: 0, latency: c.d.latency, errors: 0 });
  const rows: Row[] = cells.map((c) => {
    const s = delivery(c);
    const other = c.system === 'orchd' ? cells.find((x) => x.system === 'etcd' && x.watchers === c.watchers) : undefined;
    return {
      system: c.system,
      transport: TRANSPORT_TITLES[c.transport],
      watchers: c.watchers,
      writes: c.write.throughput,
      delivered: (c.d.delivered * 1000) / c.write.windowMs,
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      missing: c.expected - c.d.delivered,
      writeP99: cellStats(c.write).p99,
      serverCpu: c.serverCpu,
      clientCpu: c.write.cpu.client,
      peakRss: c.peakRss,
      vsEtcd: other ? ratio(delivery(other).p99, s.p99) : null,
    };
  });
  const columns = [
    col('system', 'system', 'text'),
    col('transport', 'transport', 'text'),
    col('watchers', 'watchers', 'int'),
    col('writes', 'writes/s', 'rate'),
    col('delivered', 'events delivered/s', 'rate'),
    col('p50', 'delivery p50 ms', 'ms'),
    col('p99', 'delivery p99 ms', 'ms'),
    col('max', 'delivery max ms', 'ms'),
    col('missing', 'missing', 'int'),
    col('writeP99', 'write p99 ms', 'ms'),
    col('serverCpu', 'server CPU', 'pct'),
    col('clientCpu', 'client CPU', 'pct'),
    col('peakRss', 'server peak RSS', 'bytes'),
  ];
  if (ctx.etcd) columns.push(col('vsEtcd', 'etcd p99 / orchd p99', 'ratio'));
  const notes = [
    `Writer: ${ctx.opts.watchRate} creates/s, open loop (at most 64 in flight), ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured; every watcher watches the whole namespace, so each create is delivered to every watcher.`,
    'Delivery latency: from the writer sending the create to a watcher reading its event (a line of the chunked HTTP stream, a WebSocket message; commit → client plus the write\'s own path to the commit). missing: deliveries not seen within 5 s after the last write.',
    'All watchers live in the harness process on the same 2 cores: at high fan-out the client (reading N sockets) can be the bottleneck, see client CPU.',
    ...cells.flatMap((c) => errorNote(`${c.system} writer, ${c.watchers} ${TRANSPORT_TITLES[c.transport]} watchers`, c.write)),
  ];
  const targets: TargetCheck[] = ctx.opts.watchTransports.map((t) => {
    const cell = cells.find((c) => c.system === 'orchd' && c.transport === t && c.watchers >= TARGET.watchers && ctx.opts.watchRate >= TARGET.rate);
    const p99 = cell ? delivery(cell).p99 : NaN;
    return {
      scenario: 'watch',
      name: `${TARGET.watchers.toLocaleString('en-US')} ${TRANSPORT_TITLES[t]} watchers at ${TARGET.rate.toLocaleString('en-US')} writes/s, delivery p99`,
      target: `< ${TARGET.p99} ms`,
      measured: cell ? `${p99.toFixed(1)} ms` : 'not at that size (use --watchers 10000 --watch-rate 1000)',
      met: cell ? p99 < TARGET.p99 && cell.expected === cell.d.delivered : null,
    };
  });
  return {
    id: 'watch',
    title: watch.title,
    tables: [{ title: 'watch: fan-out delivery latency', columns, rows, notes }],
    plots: [histogramPlot('Watch delivery latency', cells.map((c) => histogramSeries(`${c.system}, ${c.watchers} ${TRANSPORT_TITLES[c.transport]} watchers`, c.d.latency)))],
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const watch: Scenario = { id: 'watch', title: 'Watch fan-out: delivery latency at a fixed write rate', run };
