/**
 * The scenarios that run against any API server given by kubeconfig (`--kubeconfig`, several side by
 * side): writes (creates, closed loop at each --clients) and reads (gets by name of objects it made,
 * at --read-clients). Each server writes the kind discovery found on it; the report names each server
 * by context, /version and that kind, in one table and one plot per scenario.
 */
import { errorNote, prefixed, cellStats } from '../cells.js';
import { bounds, type BenchContext } from '../context.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { eventBody, namer, NAMESPACE } from '../payload.js';
import { col, type Column, type Row, type ScenarioResult, type Series } from '../result.js';
import { BenchUsageError, type BenchKind, type RemoteServer } from './server.js';

export const REMOTE_SCENARIOS = ['writes', 'reads'] as const;
/** Objects the reads scenario creates first on each server, then gets by name. */
const READ_POOL = 200;
const RUN_LABEL = 'bench.orch.io/run';

/** The ~1 KB object a scenario writes, of the kind the server serves. */
function body(kind: BenchKind, name: string, i: number, run: string): Buffer {
  const event = eventBody(name, i);
  const labels = { ...event.metadata.labels, [RUN_LABEL]: run };
  const object =
    kind.kind === 'Event'
      ? { ...event, apiVersion: kind.apiVersion, metadata: { ...event.metadata, labels } }
      : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE, labels }, data: { note: String(event.note), regarding: JSON.stringify(event.regarding) } };
  return Buffer.from(JSON.stringify(object));
}

export async function runRemote(ctx: BenchContext, servers: RemoteServer[]): Promise<ScenarioResult[]> {
  const unsupported = ctx.opts.scenarios.filter((s) => !(REMOTE_SCENARIOS as readonly string[]).includes(s));
  if (unsupported.length > 0) throw new BenchUsageError(`--kubeconfig runs ${REMOTE_SCENARIOS.join(' and ')} only, not ${unsupported.join(', ')}`);
  const results: ScenarioResult[] = [];
  for (const id of ctx.opts.scenarios) results.push(id === 'writes' ? await writes(ctx, servers) : await reads(ctx, servers));
  return results;
}

/** Every server, one after another, through the same closed loop. */
async function perServer(
  ctx: BenchContext,
  servers: RemoteServer[],
  clients: number[],
  what: string,
  cell: (s: RemoteServer, http: HttpClient, c: number, run: string) => Promise<RunResult>,
): Promise<Map<string, Map<number, RunResult>>> {
  const out = new Map<string, Map<number, RunResult>>();
  for (const s of servers) {
    const run = namer('run')(0);
    const byClients = new Map<number, RunResult>();
    for (const c of clients) {
      ctx.log(`${what}: ${s.context}, ${c} clients`);
      const http = new HttpClient(s.url, c, s.client);
      try {
        byClients.set(c, await cell(s, http, c, run));
      } finally {
        http.close();
      }
    }
    await cleanUp(s, run);
    out.set(s.label, byClients);
  }
  return out;
}

/** Deletes what the run made (best effort: a server may refuse deletecollection; Events expire anyway). */
async function cleanUp(s: RemoteServer, run: string): Promise<void> {
  const http = new HttpClient(s.url, 1, s.client);
  await http.request('DELETE', `${s.kind.collection}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${run}`)}`).catch(() => undefined);
  http.close();
}

async function writes(ctx: BenchContext, servers: RemoteServer[]): Promise<ScenarioResult> {
  const started = performance.now();
  const name = namer('w');
  let n = 0;
  const runs = await perServer(ctx, servers, ctx.opts.clients, 'writes', (s, http, c, run) =>
    closedLoop(c, bounds(ctx), async () => {
      const i = n++;
      return expectStatus(await http.request('POST', s.kind.collection, body(s.kind, name(i), i, run)), 201);
    }),
  );
  return report('writes', 'creates over HTTP keep-alive', 'creates/s', ctx.opts.clients, servers, runs, started);
}

async function reads(ctx: BenchContext, servers: RemoteServer[]): Promise<ScenarioResult> {
  const started = performance.now();
  const name = namer('r');
  const c = ctx.opts.readClients;
  const runs = await perServer(ctx, servers, [c], 'reads', async (s, http, _c, run) => {
    const pool: string[] = [];
    for (let i = 0; i < READ_POOL; i++) {
      pool.push(name(i));
      expectStatus(await http.request('POST', s.kind.collection, body(s.kind, name(i), i, run)), 201);
    }
    let i = 0;
    return closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('GET', `${s.kind.collection}/${pool[i++ % pool.length]}`, undefined, { keep: 0 }), 200));
  });
  return report('reads', `gets by name (${READ_POOL} objects made first)`, 'gets/s', [c], servers, runs, started);
}

/** One table (a row per client count, a group of columns per server) and one plot, servers named by what they said. */
function report(id: string, what: string, rateTitle: string, clients: number[], servers: RemoteServer[], runs: Map<string, Map<number, RunResult>>, started: number): ScenarioResult {
  const rows: Row[] = clients.map((c) => ({ clients: c, ...Object.assign({}, ...servers.map((s, i) => prefixed(`s${i}`, cellStats(runs.get(s.label)!.get(c)!)))) }));
  const columns: Column[] = [col('clients', 'clients', 'int')];
  servers.forEach((s, i) => columns.push(col(`s${i}Rate`, `${s.context} ${rateTitle}`, 'rate'), col(`s${i}P50`, 'p50 ms', 'ms'), col(`s${i}P99`, 'p99 ms', 'ms'), col(`s${i}Errors`, 'errors', 'int')));
  const notes = [
    ...servers.map(
      (s) => `${s.context}: ${s.url}, ${s.version}, writing ${s.kind.apiVersion} ${s.kind.kind}s${s.kind.kind === 'ConfigMap' ? ' (it serves no Events)' : ''} in namespace ${NAMESPACE} (${s.label}).`,
    ),
    'Servers run one after another with the same load; the load generator runs here. Objects are ~1 KB of JSON; what a run made is deleted after it (where the server allows deletecollection).',
    ...servers.flatMap((s) => clients.flatMap((c) => errorNote(`${s.context} ${c} clients`, runs.get(s.label)!.get(c)!))),
  ];
  const series: Series[] = servers.map((s) => ({ name: `${s.context} (${s.version})`, points: clients.map((c) => [c, runs.get(s.label)!.get(c)!.throughput]) }));
  return {
    id,
    title: `${id} against ${servers.length} server${servers.length > 1 ? 's' : ''} by kubeconfig`,
    tables: [{ title: `${id}: ${what}, by kubeconfig`, columns, rows, notes }],
    plots: [{ title: `${rateTitle} vs clients`, kind: 'line', xLabel: 'clients', yLabel: 'operations/s', logX: true, logY: false, series }],
    targets: [],
    elapsedMs: performance.now() - started,
  };
}
