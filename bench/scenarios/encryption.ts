/**
 * encryption: Event creates over HTTP keep-alive (closed loop, each acknowledged once durable) with
 * Events encrypted at rest by aesgcm, secretbox and a KMS v2 plugin (the local plugin of
 * bench/peers/local-kms-plugin.ts, its own process, on a unix socket), side by side with identity (stored
 * plainly, the same as no EncryptionConfiguration at all).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { EVENTS_GROUP, eventBytes, eventsPath, namer } from '../payload.js';
import { KmsPlugin } from '../peers/kms-plugin.js';
import { col, type Column, type Plot, type Row, type ScenarioResult, type Series } from '../result.js';
import { summarize } from '../stats.js';

interface Provider {
  id: string;
  /** The providers list of the Events' resource entry. */
  yaml: (kmsEndpoint: string) => string;
}

const key = (type: string, bytes: number) => `      - ${type}:\n          keys:\n            - name: bench\n              secret: ${randomBytes(bytes).toString('base64')}\n`;
const PROVIDERS: Provider[] = [
  { id: 'identity', yaml: () => '      - identity: {}\n' },
  { id: 'aesgcm', yaml: () => key('aesgcm', 32) },
  { id: 'secretbox', yaml: () => key('secretbox', 32) },
  { id: 'kms', yaml: (endpoint) => `      - kms:\n          apiVersion: v2\n          name: bench\n          endpoint: ${endpoint}\n` },
];

const configYaml = (providers: string) => `apiVersion: apiserver.config.orch.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [events.${EVENTS_GROUP}]
    providers:
${providers}`;

/** Creates at each client count against an orchd serving with one provider. */
async function measure(ctx: BenchContext, p: Provider, dir: string, kms: KmsPlugin): Promise<Map<number, RunResult>> {
  const file = join(dir, `${p.id}.yaml`);
  await writeFile(file, configYaml(p.yaml(kms.endpoint)));
  const runs = new Map<number, RunResult>();
  const name = namer(`enc-${p.id}`);
  let n = 0;
  const { orchd, ready } = await startOrchd(ctx, undefined, ['--encryption-provider-config', file]);
  try {
    for (const c of ctx.opts.clients) {
      ctx.log(`encryption: ${p.id}, ${c} clients`);
      const http = new HttpClient(ready.url, c);
      runs.set(c, await closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('POST', eventsPath(), eventBytes(name(n++), n)), 201), { orchd: orchd.pid }));
      http.close();
    }
  } finally {
    await orchd.dispose();
  }
  return runs;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-enc-'));
  const runs = new Map<string, Map<number, RunResult>>();
  const kms = await KmsPlugin.start(join(dir, 'kms.sock'), ctx.kmsPluginScript);
  try {
    for (const p of PROVIDERS) runs.set(p.id, await measure(ctx, p, dir, kms));
  } finally {
    await kms.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const { clients } = ctx.opts;
  const base = runs.get('identity')!;
  const rows: Row[] = clients.map((c) => {
    const row: Row = { clients: c, errors: PROVIDERS.reduce((sum, p) => sum + runs.get(p.id)!.get(c)!.errors, 0) };
    for (const p of PROVIDERS) {
      const r = runs.get(p.id)!.get(c)!;
      row[`${p.id}Rate`] = r.throughput;
      row[`${p.id}P99`] = summarize(r.latency.latencies).p99;
      row[`${p.id}Cpu`] = r.cpu.orchd;
      if (p.id !== 'identity') row[`${p.id}Vs`] = ratio(r.throughput, base.get(c)!.throughput);
    }
    return row;
  });
  const columns: Column[] = [col('clients', 'clients', 'int')];
  for (const p of PROVIDERS) {
    columns.push(col(`${p.id}Rate`, `${p.id} creates/s`, 'rate'), col(`${p.id}P99`, 'p99 ms', 'ms'), col(`${p.id}Cpu`, 'orchd CPU', 'pct'));
    if (p.id !== 'identity') columns.push(col(`${p.id}Vs`, `${p.id}/identity`, 'ratio'));
  }
  columns.push(col('errors', 'errors', 'int'));
  const notes = [
    `Each cell: ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured (at most ${ctx.opts.maxOps} operations); closed loop, one keep-alive connection per client; a fresh orchd per provider.`,
    'A create is a POST of a ~1 KB Event, answered 201 only after its log batch is synced; the EncryptionConfiguration selects events.events.orch.io only, with the one provider of the column.',
    'kms: KMS v2 through the local plugin (bench/peers/local-kms-plugin.ts, its own process, gRPC on a unix socket); the plugin seals one data key seed per key id, so writes seal locally (HKDF-derived AES-256-GCM key per write) and never call it.',
    ...PROVIDERS.flatMap((p) => clients.flatMap((c) => errorNote(`${p.id} ${c} clients`, runs.get(p.id)!.get(c)!))),
  ];
  const series: Series[] = PROVIDERS.map((p) => ({ name: p.id, points: clients.map((c) => [c, runs.get(p.id)!.get(c)!.throughput]) }));
  const plots: Plot[] = [{ title: 'Creates/s vs clients, by encryption provider', kind: 'line', xLabel: 'clients', yLabel: 'operations/s', logX: true, series }];
  return {
    id: 'encryption',
    title: encryption.title,
    tables: [{ title: 'encryption: create Events encrypted at rest, by provider', columns, rows, notes }],
    plots,
    targets: [],
    elapsedMs: performance.now() - started,
  };
}

export const encryption: Scenario = { id: 'encryption', title: 'Creates (durable) with encryption at rest: aesgcm, secretbox, kms v2 vs identity', run };
