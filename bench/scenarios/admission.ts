/**
 * admission: what validating admission policies cost a create. The same Event creates as the writes
 * scenario, with 0 matching policies, then with each count of --policies (10 and 100 by default),
 * each policy bound with Deny and running one matchCondition and two validations (all passing) on
 * every create; throughput as a ratio to the run without policies, and the CEL evaluations the
 * server did per second. Beside it, the in-process ceilings: one of those expressions compiled and
 * evaluated back to back against the same Event, no HTTP, no store; and what hostile expressions
 * cost (bench/cel-regex.ts).
 */
import { Activation, PolicyCompiler } from '../../src/cel/index.js';
import { kinds } from '../../src/resources/kinds.js';
import { celRegexTable } from '../cel-regex.js';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { EVENTS_GROUP, eventBody, eventBytes, eventsPath, NAMESPACE, namer } from '../payload.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
/** The target: 10 matching policies cost less than 20 % of create throughput. */
const TARGET_POLICIES = 10;
const TARGET_RATIO = 0.8;

const MATCH_CONDITION = "object.type != 'Debug'";
const validations = (i: number) => [
  { expression: `object.reason.size() <= ${128 + i}`, message: 'reason too long' },
  { expression: '!has(object.series) || object.series.count >= 0', message: 'negative count' },
];
/** CEL expressions each matching policy evaluates per create (its matchCondition and validations). */
const EVALUATIONS_PER_POLICY = 1 + validations(0).length;

const policy = (i: number) => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: `bench-admission-${i}` },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [{ apiGroups: [EVENTS_GROUP], apiVersions: ['v1'], operations: ['CREATE'], resources: ['events'] }] },
    matchConditions: [{ name: 'not-debug', expression: MATCH_CONDITION }],
    validations: validations(i),
  },
});
const binding = (i: number) => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: `bench-admission-${i}` },
  spec: { policyName: `bench-admission-${i}`, validationActions: ['Deny'] },
});

/** Evaluations per second in a loop bounded like a load cell (warm-up, then time and count). */
function perSecond(ctx: BenchContext, once: () => unknown): number {
  const warmUntil = performance.now() + ctx.opts.warmupMs;
  while (performance.now() < warmUntil) once();
  const started = performance.now();
  const stopAt = started + ctx.opts.durationMs;
  let n = 0;
  while (n < ctx.opts.maxOps && performance.now() < stopAt) {
    once();
    n++;
  }
  return (n * 1000) / (performance.now() - started);
}

/**
 * The in-process ceilings of one validation against the bench Event: evaluation alone (one
 * activation, its object converted once), and per request (a fresh activation each time, so the
 * Event is converted to CEL values again, as each admission request does).
 */
function celCeilings(ctx: BenchContext): { evaluate: number; perRequest: number } {
  const eventKind = kinds.find((k) => k.group === EVENTS_GROUP && k.kind === 'Event')!;
  const schemas = { object: eventKind.schema };
  const compiled = new PolicyCompiler({ kind: 'validating', schemas }).compile(validations(0)[0].expression, { fieldPath: 'spec.validations[0].expression', returns: ['bool'] });
  if (!compiled.ok) throw new Error(`admission: the bench expression does not compile: ${JSON.stringify(compiled.errors)}`);
  const input = {
    object: eventBody('ceiling', 0),
    oldObject: null,
    request: {
      kind: { group: EVENTS_GROUP, version: 'v1', kind: 'Event' },
      resource: { group: EVENTS_GROUP, version: 'v1', resource: 'events' },
      operation: 'CREATE' as const,
      userInfo: { username: 'bench', groups: [] },
    },
  };
  const shared = new Activation(input, { schemas });
  return {
    evaluate: perSecond(ctx, () => compiled.program.evaluate(shared)),
    perRequest: perSecond(ctx, () => compiled.program.evaluate(new Activation(input, { schemas }))),
  };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const clients = ctx.opts.readClients;
  const counts = [0, ...ctx.opts.policies.filter((c) => c > 0)].sort((a, b) => a - b);
  const runs = new Map<number, RunResult>();
  const name = namer('adm');
  let n = 0;

  const { orchd, ready } = await startOrchd(ctx);
  try {
    const http = new HttpClient(ready.url, clients);
    let installed = 0;
    for (const count of counts) {
      for (; installed < count; installed++) {
        expectStatus(await http.request('POST', `${ADM}/validatingadmissionpolicies`, Buffer.from(JSON.stringify(policy(installed)))), 201);
        expectStatus(await http.request('POST', `${ADM}/validatingadmissionpolicybindings`, Buffer.from(JSON.stringify(binding(installed)))), 201);
      }
      ctx.log(`admission: ${count} matching policies, ${clients} clients`);
      runs.set(count, await closedLoop(clients, bounds(ctx), async () => expectStatus(await http.request('POST', eventsPath(), eventBytes(name(n++), n), { keep: 0 }), 201), { orchd: orchd.pid }));
    }
    http.close();
  } finally {
    await orchd.dispose();
  }
  ctx.log('admission: CEL evaluations in process');
  const ceiling = celCeilings(ctx);
  const hostile = celRegexTable();

  const none = runs.get(0)!;
  const rows: Row[] = counts.map((count) => {
    const r = runs.get(count)!;
    return { policies: count, ...orchdFields(r), vsNone: ratio(r.throughput, none.throughput), celRate: r.throughput * count * EVALUATIONS_PER_POLICY };
  });
  const columns = [col('policies', 'matching policies', 'int'), ...orchdColumns('creates/s'), col('vsNone', 'vs no policy', 'ratio'), col('celRate', 'CEL evals/s (server)', 'rate')];
  const notes = [
    `${clients} clients (--read-clients), closed loop; ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured per row. A create is a POST of a ~1 KB Event into namespace ${NAMESPACE}, answered 201 once durable.`,
    `Each policy matches Event CREATE, is bound with validationActions [Deny], and evaluates ${EVALUATIONS_PER_POLICY} expressions per create: the matchCondition \`${MATCH_CONDITION}\` and the validations \`${validations(0)[0].expression}\` and \`${validations(0)[1].expression}\` (all pass). CEL evals/s (server) = creates/s × policies × ${EVALUATIONS_PER_POLICY}.`,
    ...counts.flatMap((c) => errorNote(`${c} policies`, runs.get(c)!)),
  ];
  const plots = [
    {
      title: 'Creates/s vs matching policies',
      kind: 'line' as const,
      xLabel: 'matching policies',
      yLabel: 'creates/s',
      series: [{ name: 'orchd', points: counts.map((c): [number, number] => [c, runs.get(c)!.throughput]) }],
    },
    histogramPlot(
      'create latency histogram',
      counts.map((c) => histogramSeries(`${c} policies`, runs.get(c)!.latency)),
    ),
  ];
  const at = runs.get(TARGET_POLICIES);
  const r = at ? at.throughput / none.throughput : undefined;
  const targets: TargetCheck[] = [
    {
      scenario: 'admission',
      name: `create throughput with ${TARGET_POLICIES} matching policies, vs none`,
      target: `≥ ${TARGET_RATIO.toFixed(2)}× (cost < ${Math.round((1 - TARGET_RATIO) * 100)} %)`,
      measured: r === undefined ? 'not measured' : `${r.toFixed(2)}×`,
      met: r === undefined ? null : r >= TARGET_RATIO,
    },
  ];
  return {
    id: 'admission',
    title: admission.title,
    tables: [
      { title: 'admission: Event creates under matching validating policies', columns, rows, notes },
      {
        title: 'admission: CEL evaluations in process (the ceiling)',
        columns: [col('how', 'evaluation', 'text'), col('rate', 'evaluations/s', 'rate')],
        rows: [
          { how: 'one activation (the Event converted once)', rate: ceiling.evaluate },
          { how: 'a fresh activation each time (as per request)', rate: ceiling.perRequest },
        ],
        notes: [`\`${validations(0)[0].expression}\` compiled once against the Event schema, evaluated back to back on one core against the bench Event; no HTTP, no store.`],
      },
      hostile,
    ],
    plots,
    targets,
    elapsedMs: performance.now() - started,
  };
}

export const admission: Scenario = { id: 'admission', title: 'Validating admission policies: cost per create', run };
