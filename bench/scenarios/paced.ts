/**
 * paced: the CPU one create costs orchd, on LevelDB and on etcd, at the same paced rate (600 and
 * 780 creates/s, open loop): saturated runs compare group commit and wakeups unfairly (the faster
 * backend batches more), a paced one compares the work per write. Rounds alternate the backends,
 * each cell on a fresh orchd (and a fresh etcd). The generator is this process; the CPU counted is
 * the orchd process's alone (etcd's is shown beside it), per create answered 201.
 */
import { loadavg } from 'node:os';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { fixedRate, type RunResult } from '../load.js';
import { eventBytes, eventsPath, namer } from '../payload.js';
import { ensureEtcd, Etcd } from '../peers/etcd.js';
import { summarize } from '../stats.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';

const RATES = [600, 780];
/** Enough in flight that a slow answer never makes the schedule skip (a skip would lower the CPU counted). */
const IN_FLIGHT = 512;
const TARGETS = { vsLevelDb: 1.3, p99: 100 };

type Backend = 'LevelDB' | 'etcd';

interface Cell {
  backend: Backend;
  rate: number;
  round: number;
  run: RunResult & { skipped: number };
  /** ms of CPU per create: orchd's process, its main thread, and etcd's (0 on LevelDB). */
  cpuMs: number;
  mainMs: number;
  etcdMs: number;
  load: number;
}

const perCreate = (percent: number | undefined, r: RunResult) => (r.ops > 0 && percent !== undefined ? ((percent / 100) * r.windowMs) / r.ops : NaN);

async function cell(ctx: BenchContext, backend: Backend, rate: number, round: number): Promise<Cell> {
  const etcd = backend === 'etcd' ? await Etcd.start(ensureEtcd(ctx.log)) : undefined;
  const { orchd, ready } = await startOrchd(ctx, undefined, etcd ? ['--storage', 'etcd', '--etcd-servers', etcd.clientUrl] : undefined);
  try {
    const load = loadavg()[0];
    ctx.log(`paced: ${backend}, ${rate} creates/s, round ${round} (load ${load.toFixed(1)})`);
    const http = new HttpClient(ready.url, IN_FLIGHT);
    const name = namer(`p${round}`);
    const watched: Record<string, number> = { orchd: orchd.pid };
    if (etcd) watched.etcd = etcd.pid;
    const run = await fixedRate(rate, IN_FLIGHT, bounds(ctx), async (_c, i) => expectStatus(await http.request('POST', eventsPath(), eventBytes(name(i), i)), 201), watched);
    http.close();
    return { backend, rate, round, run, cpuMs: perCreate(run.cpu.orchd, run), mainMs: perCreate(run.mainThreadCpu.orchd, run), etcdMs: etcd ? perCreate(run.cpu.etcd, run) : 0, load };
  } finally {
    await orchd.dispose();
    await etcd?.stop();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const cells: Cell[] = [];
  for (const rate of RATES) {
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      // Alternating which goes first: a machine whose load drifts does not favour one backend.
      const order: Backend[] = round % 2 ? ['LevelDB', 'etcd'] : ['etcd', 'LevelDB'];
      for (const backend of order) cells.push(await cell(ctx, backend, rate, round));
    }
  }
  const rows: Row[] = cells.map((c) => {
    const s = summarize(c.run.latency.latencies);
    return {
      config: `${c.backend}, ${c.rate}/s, round ${c.round}`,
      rate: c.run.throughput,
      p50: s.p50,
      p99: s.p99,
      lost: c.run.errors + c.run.skipped,
      cpu: c.cpuMs,
      main: c.mainMs,
      etcd: c.etcdMs,
      load: c.load.toFixed(1),
    };
  });
  const targets: TargetCheck[] = [];
  for (const rate of RATES) {
    const of = (b: Backend) => cells.filter((c) => c.rate === rate && c.backend === b);
    const l = median(of('LevelDB').map((c) => c.cpuMs));
    const e = median(of('etcd').map((c) => c.cpuMs));
    const vs = ratio(e, l);
    rows.push({ config: `median, ${rate}/s: etcd / LevelDB`, cpu: vs ?? NaN });
    targets.push({
      scenario: 'paced',
      name: `CPU per create on etcd vs LevelDB, ${rate}/s paced`,
      target: `≤ ${TARGETS.vsLevelDb}×`,
      measured: vs === null ? 'not measured' : `${vs.toFixed(2)}× (${e.toFixed(3)} vs ${l.toFixed(3)} ms)`,
      met: vs === null ? null : vs <= TARGETS.vsLevelDb,
    });
    const etcdCells = of('etcd');
    const worstP99 = Math.max(...etcdCells.map((c) => summarize(c.run.latency.latencies).p99));
    const lost = etcdCells.reduce((n, c) => n + c.run.errors + c.run.skipped, 0);
    targets.push({
      scenario: 'paced',
      name: `create p99 on etcd, ${rate}/s paced, every create through`,
      target: `< ${TARGETS.p99} ms, 0 lost`,
      measured: `${worstP99.toFixed(1)} ms, ${lost} lost`,
      met: worstP99 < TARGETS.p99 && lost === 0,
    });
  }
  const columns = [
    col('config', 'backend, rate, round', 'text'),
    col('rate', 'creates/s', 'rate'),
    col('p50', 'p50', 'ms'),
    col('p99', 'p99', 'ms'),
    col('lost', 'errors + skipped', 'int'),
    col('cpu', 'orchd CPU ms / create', 'ms'),
    col('main', 'main thread ms / create', 'ms'),
    col('etcd', 'etcd CPU ms / create', 'ms'),
    col('load', 'load avg (1 min) at start', 'text'),
  ];
  const notes = [
    `Each cell: a fresh orchd (and etcd, single member on loopback, fsync on); ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms at the rate, open loop, up to ${IN_FLIGHT} in flight; the Event bodies of the writes scenario.`,
    "CPU per create: the orchd process's CPU (all threads) over the measured window, divided by the creates answered 201 in it; the generator (this process) is not counted.",
    `Rounds: ${ctx.opts.rounds} per rate, the backends taken in turn, the first of each round alternating; the median row divides the medians.`,
    ...cells.flatMap((c) => errorNote(`${c.backend} ${c.rate}/s round ${c.round}`, c.run)),
  ];
  return {
    id: 'paced',
    title: paced.title,
    tables: [{ title: 'paced: CPU per create, LevelDB and etcd at the same rate', columns, rows, notes }],
    plots: [],
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const paced: Scenario = { id: 'paced', title: 'CPU per create at a paced rate, LevelDB vs etcd', run };
