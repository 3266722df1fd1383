/**
 * One watch fan-out cell against a server (orchd or the bare fan-out peer): the watchers in
 * WATCH_CLIENTS child processes reading raw sockets (bench/watch-client.ts), a writer here creating
 * Events at a fixed rate, and what they saw: deliveries, sampled delivery latency, CPU of the
 * server and of every generator process.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { Child } from './child.js';
import { bounds, type BenchContext } from './context.js';
import { expectStatus, HttpClient } from './http-client.js';
import { fixedRate, type RunResult } from './load.js';
import { eventBody, eventsPath, namer } from './payload.js';
import { memory } from './proc.js';
import { LatencyLog } from './stats.js';
import type { WatchClientConfig, WatchClientResult } from './watch-client.js';

export const WATCH_CLIENTS = 4;
/** Every how many events a watcher client reads the index (and so the latency) of one. */
const SAMPLE_EVERY = 20;
/** How long after the last write the watchers may take before an event counts as missing. */
const DRAIN_MS = 3000;

/** Who watches what: every watcher the same namespace, or each its own namespace or regarding.name. */
export type WatchShape = 'broadcast' | 'namespaces' | 'field';

export interface FanoutCell {
  system: 'orchd' | 'peer';
  shape: WatchShape;
  transport: 'http' | 'websocket';
  watchers: number;
  write: RunResult & { skipped: number };
  latency: LatencyLog;
  delivered: number;
  expected: number;
  /** Watch connections the server ended before the cell did. */
  ended: number;
  endedTail?: string;
  serverCpu: number;
  /** CPU of the writer and the watcher clients together, % of one core. */
  generatorCpu: number;
  peakRss: number;
  /** Wall time from the first write to the last drain, ms (what deliveries/s divide by). */
  spanMs: number;
  /** With a stalled watcher: whether the server had ended it by the end of the cell. */
  stalledEnded?: boolean;
}

/** Load started beside the watchers once the warm-up is over (catch-up watches); stopped after the drain. */
export type Alongside = () => Promise<{ stop(): Promise<void> }>;

export interface FanoutServer {
  system: FanoutCell['system'];
  url: string;
  pid: number;
  /** Where watcher k watches, and where write i goes (path of the POST, and the Event's regarding.name). */
  prepare(shape: WatchShape, watchers: number): Promise<{ watchPath: (k: number) => string }>;
}

const nsOf = (shape: WatchShape, watchers: number, i: number) => (shape === 'namespaces' ? `w-${i % watchers}` : 'default');
const podOf = (shape: WatchShape, watchers: number, i: number) => (shape === 'field' ? `pod-${i % watchers}` : `pod-${i}`);
/** How many watchers each write reaches. */
export const fanoutOf = (shape: WatchShape, watchers: number) => (shape === 'broadcast' ? watchers : 1);

export function watchPathFor(shape: WatchShape, k: number, rv: string): string {
  const q = `watch=1${rv ? `&resourceVersion=${rv}` : ''}`;
  if (shape === 'namespaces') return `/apis/events.orch.io/v1/namespaces/w-${k}/events?${q}`;
  if (shape === 'field') return `/apis/events.orch.io/v1/namespaces/default/events?${q}&fieldSelector=regarding.name%3Dpod-${k}`;
  return `/apis/events.orch.io/v1/namespaces/default/events?${q}`;
}

/** A compiled bench script beside the orchd being measured (dist/bench/…), so tests that run the harness from source find it too. */
export function benchScript(ctx: BenchContext, path: string): string {
  const script = join(dirname(ctx.orchdCli), '..', 'bench', path);
  if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build first`);
  return script;
}

/** Over 80 lines: one cell start to end (clients up, writer, drain, results), with its cleanup in one finally. */
export async function fanoutCell(
  ctx: BenchContext,
  server: FanoutServer,
  shape: WatchShape,
  watchers: number,
  transport: FanoutCell['transport'],
  opts: { stalled?: boolean; alongside?: Alongside } = {},
): Promise<FanoutCell> {
  const { watchPath } = await server.prepare(shape, watchers);
  // One more watcher, here, that never reads: what it costs the others and the server.
  const stalled = opts.stalled ? stalledWatch(server.url, watchPath(0)) : undefined;
  const name = namer('bw');
  const url = new URL(server.url);
  const b = bounds(ctx);
  const maxLifeMs = 120_000 + b.warmupMs + b.durationMs;
  const paths = Array.from({ length: Math.min(WATCH_CLIENTS, watchers) }, (_, c) => Array.from({ length: Math.ceil((watchers - c) / WATCH_CLIENTS) }, (_, j) => watchPath(c + j * WATCH_CLIENTS)));
  ctx.log(`watch: ${server.system}, ${shape}, opening ${watchers} ${transport} watches in ${WATCH_CLIENTS} processes`);
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-watch-'));
  const clients = await Promise.all(
    paths.map(async (p, c) => {
      const cfg: WatchClientConfig = {
        host: url.hostname,
        port: Number(url.port),
        paths: p,
        transport,
        marker: `"name":"${name(0).slice(0, -1)}`,
        sampleEvery: SAMPLE_EVERY,
        stopAt: Date.now() + maxLifeMs,
      };
      const file = join(dir, `client-${c}.json`);
      await writeFile(file, JSON.stringify(cfg));
      return Child.start(`watch-client-${c}`, process.execPath, [benchScript(ctx, 'watch-client.js'), file]);
    }),
  );
  let side: ReturnType<Alongside> | undefined;
  try {
    await Promise.all(clients.map((c) => c.waitForLine((l) => l.includes('"msg":"ready"'), 120_000)));
    const capacity = Math.ceil((ctx.opts.watchRate * (b.warmupMs + b.durationMs)) / 1000) + 100;
    const sentAt = new Float64Array(capacity);
    const t0 = performance.now();
    const measureFrom = t0 + b.warmupMs;
    let acked = 0;
    const http = new HttpClient(server.url, 64);
    ctx.log(`watch: ${server.system}, ${shape}, ${watchers} watchers, ${ctx.opts.watchRate} creates/s`);
    const watched: Record<string, number> = { server: server.pid };
    clients.forEach((c, k) => (watched[`c${k}`] = c.pid));
    side = opts.alongside && new Promise((r) => setTimeout(r, b.warmupMs)).then(opts.alongside);
    const write = await fixedRate(
      ctx.opts.watchRate,
      64,
      b,
      async (_c, i) => {
        const body = eventBody(name(i), i);
        body.metadata.namespace = nsOf(shape, watchers, i);
        (body.regarding as { name: string }).name = podOf(shape, watchers, i);
        const start = performance.now();
        if (i < capacity && start >= measureFrom) sentAt[i] = performance.timeOrigin + start;
        expectStatus(await http.request('POST', `/apis/events.orch.io/v1/namespaces/${body.metadata.namespace}/events`, Buffer.from(JSON.stringify(body)), { keep: 0 }), 201);
        acked++;
        return true;
      },
      watched,
    );
    await new Promise((r) => setTimeout(r, DRAIN_MS));
    await (await side)?.stop();
    const spanMs = performance.now() - t0;
    const stillOpen = stalled ? await openWatches(server.url) : undefined;
    const peakRss = memory(server.pid)?.peakRss ?? NaN;
    http.close();
    const results = await Promise.all(
      clients.map(async (c) => {
        const line = c.waitForLine((l) => l.startsWith('{"msg":"result"'), 30_000);
        process.kill(c.pid, 'SIGUSR2');
        return JSON.parse(await line) as WatchClientResult;
      }),
    );
    const latency = new LatencyLog();
    for (const r of results) for (const [i, t] of r.samples) if (i < capacity && sentAt[i] > 0) latency.add(t - performance.timeOrigin - measureFrom, t - sentAt[i]);
    const generatorCpu = Object.entries(write.cpu)
      .filter(([k]) => k !== 'server')
      .reduce((sum, [, v]) => sum + v, 0);
    const ended = results.reduce((n, r) => n + r.ended, 0);
    const endedTail = results.find((r) => r.endedTail)?.endedTail;
    return {
      system: server.system,
      shape,
      transport,
      watchers,
      write,
      latency,
      delivered: results.reduce((n, r) => n + r.events, 0),
      expected: acked * fanoutOf(shape, watchers),
      ended,
      ...(endedTail ? { endedTail } : {}),
      serverCpu: write.cpu.server ?? NaN,
      generatorCpu,
      peakRss,
      spanMs,
      ...(stillOpen !== undefined ? { stalledEnded: stillOpen <= watchers } : {}),
    };
  } finally {
    await side?.then(
      (a) => a.stop(),
      () => undefined,
    );
    stalled?.destroy();
    await Promise.all(clients.map((c) => c.stop('SIGKILL', 1000)));
    await rm(dir, { recursive: true, force: true });
  }
}

/** A watch whose socket is never read: the server's buffers and then its bound fill up. */
function stalledWatch(baseUrl: string, path: string): Socket {
  const url = new URL(baseUrl);
  const s = connect({ host: url.hostname, port: Number(url.port) }, () => s.pause());
  s.on('error', () => undefined);
  s.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`);
  return s;
}

/** Open watches of Events, as orchd's /metrics counts them. */
async function openWatches(baseUrl: string): Promise<number> {
  const http = new HttpClient(baseUrl, 1);
  try {
    const res = await http.request('GET', '/metrics');
    if (res.status !== 200) return NaN;
    // A kind without open watches has no sample.
    const m = /^apiserver_registered_watchers\{group="events\.orch\.io",kind="Event"\} (\d+)$/m.exec(res.body.toString('utf8'));
    return m ? Number(m[1]) : 0;
  } finally {
    http.close();
  }
}

/** The resourceVersion of orchd's Events now: where a watcher that wants only new events starts. */
export async function eventsVersion(baseUrl: string): Promise<string> {
  const http = new HttpClient(baseUrl, 1);
  try {
    const list = await http.request('GET', `${eventsPath()}?limit=1`);
    expectStatus(list, 200);
    return (JSON.parse(list.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  } finally {
    http.close();
  }
}

/** Creates the namespaces w-0 … w-(n-1) a `namespaces` cell writes to (orchd refuses Events in a namespace that does not exist). */
export async function createNamespaces(baseUrl: string, n: number): Promise<void> {
  const http = new HttpClient(baseUrl, 32);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const k = next++;
      const r = await http.request('POST', '/api/v1/namespaces', Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `w-${k}` } })), { keep: 0 });
      if (r.status !== 201 && r.status !== 409) expectStatus(r, 201);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  http.close();
}
