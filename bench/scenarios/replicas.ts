/**
 * replicas: orchd replicas sharing one log on etcd (`--storage etcd`), 1 and 2 of them, against one
 * orchd on LevelDB and bare etcd puts from the same load generator, in one run: creates/s (clients
 * spread over the replicas), the replicas' CPU, gets/s by name (spread likewise), and how long a
 * create sent to the first replica takes to reach a watcher on the last one (cross-replica watch lag).
 */
import { Agent, request } from 'node:http';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { cellStats, errorNote } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { Orchd } from '../orchd.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { ensureEtcd, Etcd } from '../peers/etcd.js';
import { LatencyLog, summarize } from '../stats.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';

const REPLICAS = [1, 2];
/** The targets are at 64 clients (issue 25). */
const CLIENTS = 64;
const TARGETS = { lagP99: 50, vsEtcd: 0.8, createP99: 100, twoVsOne: 0.9, readScale: 1.6 };

interface Cell {
  label: string;
  replicas: number;
  writes: RunResult;
  reads: RunResult;
  lag: LatencyLog;
  lagMissing: number;
  /** The replicas' CPU during the creates (% of one core, summed over the replicas). */
  cpu: number;
}

/** One client per replica, and the loop's client i goes to replica i mod n. */
function spread(urls: string[], clients: number): HttpClient[] {
  return urls.map((u) => new HttpClient(u, Math.ceil(clients / urls.length)));
}

/**
 * Creates sent one after another to `to`, each timed from its send until a watch on `from` shows it:
 * the commit, etcd's watch to the other replica, its views, and the HTTP stream in between.
 */
async function watchLag(ctx: BenchContext, to: string, from: string): Promise<{ lag: LatencyLog; missing: number }> {
  const name = namer('lag');
  const sentAt = new Map<string, number>();
  const lag = new LatencyLog();
  const t0 = performance.now();
  const agent = new Agent({ keepAlive: true });
  const base = new URL(from);
  const req = request({ agent, host: base.hostname, port: base.port, path: `${eventsPath()}?watch=1&resourceVersion=0&sendInitialEvents=false&resourceVersionMatch=NotOlderThan` }, (res) => {
    res.setEncoding('utf8');
    let rest = '';
    res.on('data', (chunk: string) => {
      const now = performance.now();
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const m = /"name":"(lag-[^"]+)"/.exec(line);
        const at = m && sentAt.get(m[1]);
        if (at === undefined || at === null) continue;
        sentAt.delete(m![1]);
        lag.add(now - t0, now - at);
      }
    });
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end();
  await new Promise((r) => setTimeout(r, 300));
  const http = new HttpClient(to, 1);
  const stopAt = performance.now() + ctx.opts.durationMs;
  for (let i = 0; performance.now() < stopAt && i < ctx.opts.maxOps; i++) {
    const n = name(i);
    sentAt.set(n, performance.now());
    await http.request('POST', eventsPath(), eventBytes(n, i));
  }
  await new Promise((r) => setTimeout(r, 1000));
  req.destroy();
  agent.destroy();
  http.close();
  return { lag, missing: sentAt.size };
}

async function measure(ctx: BenchContext, label: string, urls: string[], pids: Record<string, number>): Promise<Cell> {
  const clients = CLIENTS;
  const name = namer('r');
  let n = 0;
  const written: string[] = [];
  ctx.log(`replicas: ${label}, creates, ${clients} clients`);
  const writers = spread(urls, clients);
  const writes = await closedLoop(
    clients,
    bounds(ctx),
    async (c) => {
      const id = name(n++);
      const ok = expectStatus(await writers[c % urls.length].request('POST', eventsPath(), eventBytes(id, n)), 201);
      if (written.length < 10_000) written.push(id);
      return ok;
    },
    pids,
  );
  writers.forEach((w) => w.close());
  ctx.log(`replicas: ${label}, gets, ${clients} clients`);
  const readers = spread(urls, clients);
  let r = 0;
  // resourceVersion=0: from the replica's views (a consistent read would ask etcd for its revision first).
  const reads = await closedLoop(
    clients,
    bounds(ctx),
    async (c) => expectStatus(await readers[c % urls.length].request('GET', `${eventsPath()}/${written[r++ % written.length]}?resourceVersion=0`), 200),
    pids,
  );
  readers.forEach((h) => h.close());
  ctx.log(`replicas: ${label}, watch lag`);
  const { lag, missing } = await watchLag(ctx, urls[0], urls[urls.length - 1]);
  const cpu = Object.entries(writes.cpu)
    .filter(([name]) => name.startsWith('orchd'))
    .reduce((sum, [, v]) => sum + v, 0);
  return { label, replicas: urls.length, writes, reads, lag, lagMissing: missing, cpu };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const cells: Cell[] = [];
  const { orchd, ready } = await startOrchd(ctx);
  try {
    cells.push(await measure(ctx, 'orchd on LevelDB', [ready.url], { orchd1: orchd.pid }));
  } finally {
    await orchd.dispose();
  }
  let bare: RunResult | undefined;
  const clients = CLIENTS;
  for (const count of REPLICAS) {
    // A fresh etcd per row: every row starts from an empty log.
    const etcd = await Etcd.start(ensureEtcd(ctx.log));
    const url = etcd.clientUrl;
    const replicas: Orchd[] = [];
    try {
      const urls: string[] = [];
      for (let i = 0; i < count; i++) {
        const started = await startOrchd(ctx, undefined, ['--storage', 'etcd', '--etcd-servers', url]);
        replicas.push(started.orchd);
        urls.push(started.ready.url);
      }
      const pids: Record<string, number> = { etcd: etcd.pid };
      replicas.forEach((o, i) => (pids[`orchd${i + 1}`] = o.pid));
      cells.push(await measure(ctx, `${count} on etcd`, urls, pids));
      if (count === 1) {
        ctx.log(`replicas: bare etcd puts, ${clients} clients`);
        const name = namer('bare');
        let n = 0;
        bare = await closedLoop(
          clients,
          bounds(ctx),
          async () => {
            const key = `/bench/${name(n++)}`;
            await etcd.client.put(key).value(eventBytes(key, n));
            return true;
          },
          { etcd: etcd.pid },
        );
      }
    } finally {
      for (const o of replicas) await o.dispose();
      await etcd.stop();
    }
  }

  const rows: Row[] = cells.map((c) => ({
    config: c.label,
    ...prefixedStats('w', c.writes),
    cpu: c.cpu,
    ...prefixedStats('r', c.reads),
    lagP50: summarize(c.lag.latencies).p50,
    lagP99: summarize(c.lag.latencies).p99,
    lagMissing: c.lagMissing,
  }));
  if (bare) rows.push({ config: 'bare etcd puts', ...prefixedStats('w', bare) });
  const columns = [
    col('config', 'configuration', 'text'),
    col('wRate', 'creates/s', 'rate'),
    col('wP50', 'create p50', 'ms'),
    col('wP99', 'create p99', 'ms'),
    col('cpu', 'replicas CPU %', 'int'),
    col('rRate', 'gets/s', 'rate'),
    col('rP99', 'get p99', 'ms'),
    col('lagP50', 'watch lag p50', 'ms'),
    col('lagP99', 'watch lag p99', 'ms'),
    col('lagMissing', 'not seen', 'int'),
  ];
  const one = cells.find((c) => c.label === '1 on etcd');
  const two = cells.find((c) => c.label === '2 on etcd');
  const notes = [
    `Each cell: ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured; closed loop, ${clients} clients spread over the replicas (client i → replica i mod n); etcd single member on loopback, fsync on, a fresh one per row.`,
    'Watch lag: creates sent one at a time to the first replica, each timed from its send until a watch (chunked HTTP) on the last replica shows it; with one replica, the same one.',
    "A create on etcd is one transaction of its own (a compare on the key's mod revision, then the put), many in flight from every replica; its resourceVersion is the revision etcd answers with, and it is acknowledged once the replica's watch brought it back.",
    'The load generator, every replica and etcd share the same 2 cores: with more replicas, each gets less CPU. Replicas CPU: % of one core, summed over the replicas, during the creates.',
    ...cells.flatMap((c) => [...errorNote(`${c.label} creates`, c.writes), ...errorNote(`${c.label} gets`, c.reads)]),
  ];
  const targets: TargetCheck[] = [];
  const lagCells = cells.filter((c) => c.replicas > 1);
  for (const c of lagCells) {
    const p99 = summarize(c.lag.latencies).p99;
    targets.push({ scenario: 'replicas', name: `cross-replica watch lag p99, ${c.label}`, target: `< ${TARGETS.lagP99} ms`, measured: `${p99.toFixed(1)} ms`, met: p99 < TARGETS.lagP99 });
  }
  const vs = ratio(one?.writes.throughput, bare?.throughput);
  const oneP99 = one ? summarize(one.writes.latency.latencies).p99 : NaN;
  targets.push({
    scenario: 'replicas',
    name: `creates through one replica vs bare etcd puts, ${clients} clients`,
    target: `≥ ${TARGETS.vsEtcd}×`,
    measured: vs === null ? 'not measured' : `${vs.toFixed(2)}×`,
    met: vs === null ? null : vs >= TARGETS.vsEtcd,
  });
  targets.push({
    scenario: 'replicas',
    name: `create p99 through one replica, ${clients} clients`,
    target: `< ${TARGETS.createP99} ms`,
    measured: `${oneP99.toFixed(1)} ms`,
    met: Number.isNaN(oneP99) ? null : oneP99 < TARGETS.createP99,
  });
  const two2one = ratio(two?.writes.throughput, one?.writes.throughput);
  targets.push({
    scenario: 'replicas',
    name: 'creates/s, 2 replicas together vs 1',
    target: `≥ ${TARGETS.twoVsOne}×`,
    measured: two2one === null ? 'not measured' : `${two2one.toFixed(2)}×`,
    met: two2one === null ? null : two2one >= TARGETS.twoVsOne,
  });
  const scale = ratio(two?.reads.throughput, one?.reads.throughput);
  targets.push({
    scenario: 'replicas',
    name: 'gets/s, 2 replicas vs 1',
    target: `≥ ${TARGETS.readScale}×`,
    measured: scale === null ? 'not measured' : `${scale.toFixed(2)}×`,
    met: scale === null ? null : scale >= TARGETS.readScale,
  });
  return {
    id: 'replicas',
    title: replicasScenario.title,
    tables: [{ title: 'replicas: orchd replicas on one etcd', columns, rows, notes }],
    plots: [],
    targets,
    elapsedMs: performance.now() - started,
  };
}

function prefixedStats(prefix: string, r: RunResult): Record<string, number> {
  const s = cellStats(r);
  return { [`${prefix}Rate`]: s.rate, [`${prefix}P50`]: s.p50, [`${prefix}P99`]: s.p99 };
}

export const replicasScenario: Scenario = { id: 'replicas', title: 'Replicas sharing one log on etcd', run };
