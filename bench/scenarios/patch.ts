/**
 * patch: throughput and latency of each patch type on a ValidatingAdmissionPolicy with a 50-entry
 * matchConditions list (a list merged by key "name"), and of server-side apply of the same policy
 * with 50 validations too: 200 leaf fields whose ownership apply tracks. Each client patches its own
 * policy, so the numbers are the patch machinery's, not optimistic-retry contention; every patch
 * changes one expression, so every request is a real write.
 */
import { bounds, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { col, type Row, type ScenarioResult } from '../result.js';

const POLICIES = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
const CONDITIONS = 50;
const CHANGED = 25;

const expression = (n: number) => `size(object.metadata.name) > ${n}`;
const condition = (i: number, n: number) => ({ name: `mc-${i}`, expression: i === CHANGED ? expression(n) : 'true' });
const conditions = (n: number) => Array.from({ length: CONDITIONS }, (_, i) => condition(i, n));

function policy(name: string, n: number, validations = 1) {
  return {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
      matchConditions: conditions(n),
      validations: Array.from({ length: validations }, (_, i) => ({ expression: 'true', message: `rule ${i}` })),
    },
  };
}

interface PatchType {
  label: string;
  contentType: string;
  query: string;
  body(name: string, n: number): unknown;
}

const TYPES: PatchType[] = [
  {
    label: 'JSON patch (replace one expression)',
    contentType: 'application/json-patch+json',
    query: '',
    body: (_name, n) => [{ op: 'replace', path: `/spec/matchConditions/${CHANGED}/expression`, value: expression(n) }],
  },
  {
    label: 'merge patch (the whole list)',
    contentType: 'application/merge-patch+json',
    query: '',
    body: (_name, n) => ({ spec: { matchConditions: conditions(n) } }),
  },
  {
    label: 'strategic merge patch (one item by name)',
    contentType: 'application/strategic-merge-patch+json',
    query: '',
    body: (_name, n) => ({ spec: { matchConditions: [condition(CHANGED, n)] } }),
  },
  {
    label: 'server-side apply (200 fields)',
    contentType: 'application/apply-patch+yaml',
    query: '?fieldManager=bench&force=true',
    body: (name, n) => policy(name, n, 50),
  },
];

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const clients = ctx.opts.readClients;
  const runs = new Map<string, RunResult>();
  const { orchd, ready } = await startOrchd(ctx);
  try {
    const http = new HttpClient(ready.url, clients);
    const names = Array.from({ length: clients }, (_, c) => `patch-${c}`);
    for (const name of names) expectStatus(await http.request('POST', POLICIES, Buffer.from(JSON.stringify(policy(name, 0, 50)))), 201);
    let n = 1;
    for (const t of TYPES) {
      ctx.log(`patch: ${t.label}, ${clients} clients`);
      runs.set(
        t.label,
        await closedLoop(
          clients,
          bounds(ctx),
          async (c) => {
            const name = names[c];
            const body = Buffer.from(JSON.stringify(t.body(name, n++)));
            return expectStatus(await http.request('PATCH', `${POLICIES}/${name}${t.query}`, body, { contentType: t.contentType, keep: 0 }), 200);
          },
          { orchd: orchd.pid },
        ),
      );
    }
    http.close();
  } finally {
    await orchd.dispose();
  }

  const rows: Row[] = TYPES.map((t) => {
    const r = runs.get(t.label)!;
    return { type: t.label, ...orchdFields(r) };
  });
  const columns = [col('type', 'patch', 'text'), ...orchdColumns('patches/s')];
  const notes = [
    `${clients} clients (--read-clients), each patching its own ValidatingAdmissionPolicy with ${CONDITIONS} matchConditions and 50 validations; closed loop; ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured.`,
    'Every patch changes one expression and is answered 200 only after its write is durable. Server-side apply sends the whole 200-field configuration each time (fieldManager=bench, force=true).',
    ...TYPES.flatMap((t) => errorNote(t.label, runs.get(t.label)!)),
  ];
  const plots = [
    histogramPlot(
      'patch latency histogram',
      TYPES.map((t) => histogramSeries(t.label, runs.get(t.label)!.latency)),
    ),
  ];
  return { id: 'patch', title: patch.title, tables: [{ title: 'patch: each patch type on a 50-entry list', columns, rows, notes }], plots, targets: [], elapsedMs: performance.now() - started };
}

export const patch: Scenario = { id: 'patch', title: 'Patch types and server-side apply', run };
