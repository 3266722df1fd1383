/** The writes scenario's tables and targets, from its rounds (writes.ts runs them). */
import { cellStats, errorNote, orchdColumns, orchdFields } from '../cells.js';
import { ratio } from '../context.js';
import type { RunResult } from '../load.js';
import { col, type Row, type Table, type TargetCheck } from '../result.js';
import { STAGES } from '../../src/observability/stage-timing.js';

const TARGET_RATE = 5000;
const TARGET_CLIENTS = 64;
/** Events the update cells write to, created by the create cells (each write picks the next one). */
export const UPDATE_POOL = 1000;

/** A change of an existing Event: a PUT of the whole object, or a merge patch of one annotation. */
export type Change = 'update' | 'patch';
export const CHANGES: Change[] = ['update', 'patch'];

/** The round of median rate (the lower middle one of an even count). */
export function medianRun(runs: readonly RunResult[]): RunResult {
  const sorted = [...runs].sort((a, b) => a.throughput - b.throughput);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The median of the rounds' own ratios a[i]/b[i] (round i of each was taken back to back). */
export function medianRatio(a: readonly RunResult[], b: readonly RunResult[]): number | null {
  const r = a
    .flatMap((x, i) => (b[i] ? [ratio(x.throughput, b[i].throughput)] : []))
    .filter((v): v is number => v !== null)
    .sort((x, y) => x - y);
  return r.length === 0 ? null : r[Math.floor((r.length - 1) / 2)];
}

/** ms of CPU per operation of the watched process `proc` (all threads, and its main thread), as `${prefix}CpuPerOp` and `${prefix}MainPerOp`. */
export function cpuPerOp(r: RunResult, proc: string, prefix: string): Record<string, number> {
  const per = (pct: number | undefined) => (pct === undefined ? NaN : (pct / 100) * (1000 / r.throughput));
  return { [`${prefix}CpuPerOp`]: per(r.cpu[proc]), [`${prefix}MainPerOp`]: per(r.mainThreadCpu[proc]) };
}

/** Every round, as taken: what the medians of the first table were chosen from. */
export function roundsTable(clients: number[], orchd: Map<number, RunResult[]>, gateway: Map<number, RunResult[]>, grpc: Map<number, RunResult[]>): Table {
  const rows: Row[] = clients.flatMap((c) =>
    orchd.get(c)!.map((o, i) => {
      const g = gateway.get(c)?.[i];
      const e = grpc.get(c)?.[i];
      return {
        clients: c,
        round: i + 1,
        orchdRate: o.throughput,
        orchdP50: cellStats(o).p50,
        ...cpuPerOp(o, 'orchd', 'orchd'),
        gatewayRate: g?.throughput ?? null,
        gatewayP50: g ? cellStats(g).p50 : null,
        vsGateway: ratio(o.throughput, g?.throughput),
        etcdRate: e?.throughput ?? null,
        etcdP50: e ? cellStats(e).p50 : null,
        vsEtcd: ratio(o.throughput, e?.throughput),
      };
    }),
  );
  const columns = [
    col('clients', 'clients', 'int'),
    col('round', 'round', 'int'),
    col('orchdRate', 'orchd creates/s', 'rate'),
    col('orchdP50', 'p50 ms', 'ms'),
    col('orchdCpuPerOp', 'orchd CPU per create ms', 'ms'),
    col('orchdMainPerOp', 'of it main thread ms', 'ms'),
  ];
  if (gateway.size > 0) {
    columns.push(col('gatewayRate', 'etcd gateway puts/s', 'rate'), col('gatewayP50', 'gateway p50', 'ms'), col('vsGateway', 'orchd/gateway', 'ratio'));
    columns.push(col('etcdRate', 'etcd gRPC puts/s', 'rate'), col('etcdP50', 'gRPC p50', 'ms'), col('vsEtcd', 'orchd/gRPC', 'ratio'));
  }
  return {
    title: "writes: every round (orchd, then etcd's gateway, then its gRPC, back to back)",
    columns,
    rows,
    notes: ['The first table shows the median round of each system and the median of these ratios.'],
  };
}

/** The targets of issues 3, 7, 19 and 26, on the median rounds. */
export function targets(orchd: Map<number, RunResult[]>, gateway: Map<number, RunResult[]>, grpc: Map<number, RunResult[]>, changeRuns: Map<Change, Map<number, RunResult>>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const at = orchd.get(TARGET_CLIENTS) && medianRun(orchd.get(TARGET_CLIENTS)!);
  out.push({
    scenario: 'writes',
    name: `durable creates/s at ${TARGET_CLIENTS} clients`,
    target: `≥ ${TARGET_RATE.toLocaleString('en-US')}/s`,
    measured: at ? `${Math.round(at.throughput).toLocaleString('en-US')}/s` : 'not measured',
    met: at ? at.throughput >= TARGET_RATE : null,
  });
  const e64 = grpc.get(TARGET_CLIENTS);
  const vsGrpc = at && e64 ? medianRatio(orchd.get(TARGET_CLIENTS)!, e64) : null;
  if (vsGrpc !== null)
    out.push({ scenario: 'writes', name: `creates vs etcd puts at ${TARGET_CLIENTS} clients (median of rounds)`, target: '≥ 1.0×', measured: `${vsGrpc.toFixed(2)}×`, met: vsGrpc >= 1 });
  const vsGateway = at && gateway.get(TARGET_CLIENTS) ? medianRatio(orchd.get(TARGET_CLIENTS)!, gateway.get(TARGET_CLIENTS)!) : null;
  if (vsGateway !== null)
    out.push({
      scenario: 'writes',
      name: `creates vs etcd JSON-gateway puts at ${TARGET_CLIENTS} clients, median of rounds (issues 19, 26)`,
      target: '≥ 1.5×',
      measured: `${vsGateway.toFixed(2)}×`,
      met: vsGateway >= 1.5,
    });
  const one = orchd.get(1) && medianRun(orchd.get(1)!);
  const g1 = gateway.get(1) && medianRun(gateway.get(1)!);
  if (one && g1) {
    const [p, q] = [cellStats(one).p50, cellStats(g1).p50];
    out.push({ scenario: 'writes', name: 'create p50 vs etcd JSON-gateway put p50 at 1 client (issue 26)', target: '≤ 1.0×', measured: `${p.toFixed(2)} vs ${q.toFixed(2)} ms`, met: p <= q });
  }
  if (one) {
    const ms = cpuPerOp(one, 'orchd', 'orchd').orchdCpuPerOp;
    out.push({ scenario: 'writes', name: 'orchd CPU per create at 1 client (issue 26)', target: '≤ 0.4 ms', measured: `${ms.toFixed(2)} ms`, met: ms <= 0.4 });
  }
  for (const change of CHANGES) {
    const r = changeRuns.get(change)!.get(TARGET_CLIENTS);
    if (!r || !e64) continue;
    const x = r.throughput / medianRun(e64).throughput;
    out.push({
      scenario: 'writes',
      name: `${change === 'update' ? 'updates (PUT)' : 'merge patches'} vs etcd puts at ${TARGET_CLIENTS} clients`,
      target: '≥ 1.0×',
      measured: `${x.toFixed(2)}×`,
      met: x >= 1,
    });
  }
  return out;
}

/** Updates and merge patches of existing Events, beside etcd's puts of the same concurrency. */
export function changes(clients: number[], runs: Map<Change, Map<number, RunResult>>, etcdRounds: Map<number, RunResult[]>): Table {
  const rows: Row[] = CHANGES.flatMap((change) =>
    clients.map((c) => {
      const r = runs.get(change)!.get(c)!;
      const e = etcdRounds.get(c) && medianRun(etcdRounds.get(c)!);
      return { change: change === 'update' ? 'update (PUT)' : 'merge patch', clients: c, ...orchdFields(r), ...(e ? { etcdRate: e.throughput, vsEtcd: ratio(r.throughput, e.throughput) } : {}) };
    }),
  );
  const columns = [col('change', 'write', 'text'), col('clients', 'clients', 'int'), ...orchdColumns('orchd writes/s')];
  if (etcdRounds.size > 0) columns.push(col('etcdRate', 'etcd puts/s', 'rate'), col('vsEtcd', 'orchd/etcd', 'ratio'));
  const notes = [
    `Each write changes one of the first ${UPDATE_POOL} Events the create cells made (the next one each time, so concurrent writes rarely meet on one object): a PUT of the whole ~1 KB Event without resourceVersion, or a merge patch of its sent-at annotation; each answered 200 once durable. etcd: the create table's gRPC puts (median round).`,
    ...clients.flatMap((c) => CHANGES.flatMap((change) => errorNote(`orchd ${change} ${c} clients`, runs.get(change)!.get(c)!))),
  ];
  return { title: 'writes: updates (PUT) and merge patches of existing Events', columns, rows, notes };
}

/**
 * µs per create in each stage (orchd's ORCHD_STAGE_TIMING counters over every round of the client count, warm-ups included,
 * divided by the creates answered), beside the server's whole request time and orchd's CPU per create.
 */
export function breakdown(clients: number[], rounds: Map<number, RunResult[]>, stages: Map<number, Record<string, number>>): Table {
  const rows: Row[] = clients.map((c) => {
    const us = stages.get(c) ?? {};
    const run = medianRun(rounds.get(c)!);
    const staged = STAGES.reduce((sum, s) => sum + (s === 'append' ? 0 : (us[s] ?? 0)), 0);
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
    "µs per create. decode: the body's bytes to a JSON value (duplicate fields found); checks: apiVersion/kind, type and unknown-field checks; field manager: managedFields (and the defaults it applies first); defaults: system metadata, strategy and defaults, the namespace lookup; admission: mutating and validating admission (none configured here); validation: the kind's validation; encode: the log record (msgpack) and its place in the batch; respond: the 201's JSON and write.",
    'Stages are synchronous code but for admission (awaited: other requests may run in between) and append and sync wait (from the append until the batch is durable and the view applied it: a wait shared by the batch, not CPU).',
    "server request time: apiserver_request_duration_seconds for POST events (body reading, authentication, routing and the stages, waits included). orchd CPU per create: orchd's CPU over the measured window (all its threads, LevelDB's too) divided by the creates; the difference to the CPU stages is HTTP parsing, body reading, routing, authorization, the view's apply and the garbage collector.",
  ];
  return { title: "writes: where a create's time goes (µs per create)", columns, rows, notes };
}
