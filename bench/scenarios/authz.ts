/**
 * authz: what authentication and authorization cost a request. The same request (get of one ~1 KB
 * Event by name, at the read concurrency) is served by three orchds, all over HTTPS with the same
 * given certificate so TLS is paid alike:
 *   none   no configuration: anonymous, everything allowed;
 *   jwt    JWT authentication: a bearer token, checked once then answered from the token cache;
 *   jwt+webhook  the same plus a Webhook authorizer answering from its cache (authorizedTTL 5m).
 * The issuer and the webhook live in the harness (bench/peers/auth-peers.ts) and count their calls,
 * so the table shows the caches held. Target: authn + cached authz cost < 15 % of the throughput.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { eventBytes, eventsPath } from '../payload.js';
import { AuthPeers } from '../peers/auth-peers.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';

type Flags = Awaited<ReturnType<AuthPeers['files']>>;

interface Setup {
  id: string;
  label: string;
  flags: (f: Flags) => string[];
  token: boolean;
}

const SETUPS: Setup[] = [
  { id: 'none', label: 'no authentication, no authorization', flags: (f) => f.tls, token: false },
  { id: 'jwt', label: 'JWT authentication (token cache)', flags: (f) => f.authn, token: true },
  { id: 'jwt+webhook', label: 'JWT + Webhook authorizer (answer cache)', flags: (f) => f.authz, token: true },
];

interface Cell {
  setup: Setup;
  result: RunResult;
  reviews: number;
  jwksFetches: number;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const peers = await new AuthPeers().start();
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-authz-'));
  const cells: Cell[] = [];
  const clients = ctx.opts.readClients;
  try {
    const flags = await peers.files(dir);
    const token = await peers.token('bench-user');
    for (const setup of SETUPS) {
      ctx.log(`authz: orchd with ${setup.id}, ${clients} clients`);
      const { orchd, ready } = await startOrchd(ctx, undefined, setup.flags(flags));
      const http = new HttpClient(ready.url, clients, { ca: peers.caPem, headers: setup.token ? { authorization: `Bearer ${token}` } : {} });
      try {
        expectStatus(await http.request('POST', eventsPath(), eventBytes('authz-target', 0)), 201);
        const path = `${eventsPath()}/authz-target`;
        const before = { reviews: peers.reviews, jwks: peers.jwksFetches };
        const result = await closedLoop(clients, bounds(ctx), async () => expectStatus(await http.request('GET', path), 200), { orchd: orchd.pid });
        cells.push({ setup, result, reviews: peers.reviews - before.reviews, jwksFetches: peers.jwksFetches - before.jwks });
      } finally {
        http.close();
        await orchd.dispose();
      }
    }
  } finally {
    await peers.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const none = cells.find((c) => c.setup.id === 'none');
  const rows: Row[] = cells.map((c) => ({
    setup: c.setup.label,
    ...orchdFields(c.result),
    vsNone: ratio(c.result.throughput, none?.result.throughput),
    reviews: c.reviews,
    jwks: c.jwksFetches,
  }));
  const columns = [
    col('setup', 'setup', 'text'),
    ...orchdColumns('gets/s'),
    col('vsNone', 'vs none', 'ratio'),
    col('reviews', 'webhook calls', 'int'),
    col('jwks', 'JWKS fetches', 'int'),
  ];
  const notes = [
    `${clients} clients, closed loop, get of one ~1 KB Event by name; each cell ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured. Every orchd serves HTTPS with the same given certificate.`,
    'webhook calls and JWKS fetches are counted from the warm-up on: the first request of a user misses the caches, the rest hit them.',
    ...cells.flatMap((c) => errorNote(`orchd ${c.setup.id}`, c.result)),
  ];
  const targets: TargetCheck[] = [];
  const full = cells.find((c) => c.setup.id === 'jwt+webhook');
  if (none && full) {
    const cost = 1 - full.result.throughput / none.result.throughput;
    targets.push({ scenario: 'authz', name: 'cached JWT authentication + webhook authorization, throughput cost', target: '< 15 %', measured: `${(cost * 100).toFixed(1)} %`, met: cost < 0.15 });
  }
  return {
    id: 'authz',
    title: authz.title,
    tables: [{ title: 'authz: cost of authentication and authorization per request', columns, rows, notes }],
    plots: [histogramPlot('get latency by setup', cells.map((c) => histogramSeries(c.setup.id, c.result.latency)))],
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const authz: Scenario = { id: 'authz', title: 'Authentication and authorization cost: JWT + cached webhook vs none', run };
