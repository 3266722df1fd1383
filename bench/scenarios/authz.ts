/**
 * authz: what authentication and authorization cost a request. The same request (get of one ~1 KB
 * Event by name, at the read concurrency) is served by three orchds, all over HTTPS with the same
 * given certificate so TLS is paid alike:
 *   none   no configuration: anonymous, everything allowed;
 *   jwt    JWT authentication: a bearer token, checked once then answered from the token cache;
 *   jwt+webhook  the same plus a Webhook authorizer answering from its cache (authorizedTTL 5m).
 * The issuer and the webhook live in the harness (bench/peers/auth-peers.ts) and count their calls,
 * so the table shows the caches held. The three servers run side by side and are measured in turn,
 * ROUNDS times, each setup's row being its median round: a machine whose load drifts during the run
 * then favours no setup. Target: authn + cached authz cost < 15 % of the throughput.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import type { Orchd } from '../orchd.js';
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

const ROUNDS = 3;

const SETUPS: Setup[] = [
  { id: 'none', label: 'no authentication, no authorization', flags: (f) => f.tls, token: false },
  { id: 'jwt', label: 'JWT authentication (token cache)', flags: (f) => f.authn, token: true },
  { id: 'jwt+webhook', label: 'JWT + Webhook authorizer (answer cache)', flags: (f) => f.authz, token: true },
];

interface Cell {
  setup: Setup;
  /** The round with the median throughput. */
  result: RunResult;
  rounds: number[];
  reviews: number;
  jwksFetches: number;
}

interface Running {
  setup: Setup;
  orchd: Orchd;
  http: HttpClient;
  results: RunResult[];
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
    const servers: Running[] = [];
    try {
      for (const setup of SETUPS) {
        const { orchd, ready } = await startOrchd(ctx, undefined, setup.flags(flags));
        const http = new HttpClient(ready.url, clients, { ca: peers.caPem, headers: setup.token ? { authorization: `Bearer ${token}` } : {} });
        servers.push({ setup, orchd, http, results: [], reviews: 0, jwksFetches: 0 });
        expectStatus(await http.request('POST', eventsPath(), eventBytes('authz-target', 0)), 201);
      }
      const path = `${eventsPath()}/authz-target`;
      for (let round = 1; round <= ROUNDS; round++) {
        for (const s of servers) {
          ctx.log(`authz: round ${round}/${ROUNDS}, orchd with ${s.setup.id}, ${clients} clients`);
          const before = { reviews: peers.reviews, jwks: peers.jwksFetches };
          s.results.push(await closedLoop(clients, bounds(ctx), async () => expectStatus(await s.http.request('GET', path), 200), { orchd: s.orchd.pid }));
          s.reviews += peers.reviews - before.reviews;
          s.jwksFetches += peers.jwksFetches - before.jwks;
        }
      }
    } finally {
      for (const s of servers) {
        s.http.close();
        await s.orchd.dispose();
      }
    }
    for (const s of servers) {
      const sorted = [...s.results].sort((a, b) => a.throughput - b.throughput);
      cells.push({ setup: s.setup, result: sorted[Math.floor(sorted.length / 2)], rounds: s.results.map((r) => r.throughput), reviews: s.reviews, jwksFetches: s.jwksFetches });
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
  const columns = [col('setup', 'setup', 'text'), ...orchdColumns('gets/s'), col('vsNone', 'vs none', 'ratio'), col('reviews', 'webhook calls', 'int'), col('jwks', 'JWKS fetches', 'int')];
  const notes = [
    `${clients} clients, closed loop, get of one ~1 KB Event by name; each round ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured, ${ROUNDS} rounds per setup taken in turn, the row is the median round. Every orchd serves HTTPS with the same given certificate.`,
    `gets/s of every round: ${cells.map((c) => `${c.setup.id} ${c.rounds.map((r) => Math.round(r)).join(' / ')}`).join('; ')}.`,
    'webhook calls and JWKS fetches are counted over all rounds from the first warm-up on: the first request of a user misses the caches, the rest hit them.',
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
    plots: [
      histogramPlot(
        'get latency by setup',
        cells.map((c) => histogramSeries(c.setup.id, c.result.latency)),
      ),
    ],
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const authz: Scenario = { id: 'authz', title: 'Authentication and authorization cost: JWT + cached webhook vs none', run };
