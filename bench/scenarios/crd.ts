/**
 * crd: CustomResourceDefinitions (issue 32).
 *   rules      creates/s of a custom resource whose schema carries 30 CEL rules (x-kubernetes-
 *              validations, every one evaluated on every create), against the same kind without them
 *   establish  the time from the create of a CRD (what `kubectl apply -f crd.yaml` sends) to the
 *              first create of its kind that the server takes (target < 100 ms), and to the CRD's
 *              Established condition; then the same with kubectl itself: `kubectl apply` of the CRD
 *              followed at once by `kubectl create` of an object of its kind (two processes)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bounds, ratio, startOrchd, type BenchContext, type Scenario } from '../context.js';
import { errorNote, orchdColumns, orchdFields } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type RunResult } from '../load.js';
import { NAMESPACE, namer } from '../payload.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { summarize } from '../stats.js';
import { cpuSeconds } from '../proc.js';
import { largeCrds } from '../crd-install.js';
import { customKindOf } from '../../src/resources/crd/custom-kind.js';
import { servedAt } from '../../src/api/strategy.js';
import type { KubeObject } from '../../src/api/types.js';

const RULES = 30;
const FIELDS = 30;
const ESTABLISH_TRIES = 20;
const ESTABLISH_TARGET_MS = 100;
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const run$ = promisify(execFile);

/** A CRD of group bench.example.com whose spec has FIELDS fields, with one CEL rule per field when rules. */
function benchCrd(plural: string, kind: string, rules: boolean): object {
  const properties = Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`f${i}`, i % 2 ? { type: 'integer', minimum: 0 } : { type: 'string', maxLength: 64 }]));
  const validations = Array.from({ length: RULES }, (_, i) => ({ rule: i % 2 ? `self.f${i} <= ${1000 + i}` : `self.f${i}.startsWith('v')`, message: `f${i} is out of bounds` }));
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.bench.example.com` },
    spec: {
      group: 'bench.example.com',
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties, ...(rules ? { 'x-kubernetes-validations': validations } : {}) } } } },
        },
      ],
    },
  };
}

const objectOf = (kind: string, name: string, i: number): Buffer =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'bench.example.com/v1',
      kind,
      metadata: { name, namespace: NAMESPACE },
      spec: Object.fromEntries(Array.from({ length: FIELDS }, (_, f) => [`f${f}`, f % 2 ? (i + f) % 1000 : `value-${i}-${f}`])),
    }),
  );
const pathOf = (plural: string) => `/apis/bench.example.com/v1/namespaces/${NAMESPACE}/${plural}`;

/** Milliseconds from sending a CRD's create to the first create of its kind taken, and to Established. */
async function establishOnce(http: HttpClient, t: number): Promise<{ firstCreate: number; established: number; retries: number }> {
  const plural = `things${t}`;
  const kind = `Thing${t}`;
  const started = performance.now();
  expectStatus(await http.request('POST', CRDS, Buffer.from(JSON.stringify(benchCrd(plural, kind, true)))), 201);
  let retries = 0;
  for (;;) {
    const r = await http.request('POST', pathOf(plural), objectOf(kind, 'first', 1), { keep: 0 });
    if (r.status === 201) break;
    if (r.status !== 404 || performance.now() - started > 10_000) throw new Error(`crd: the first create of ${kind} answered ${r.status}`);
    retries++;
  }
  const firstCreate = performance.now() - started;
  for (;;) {
    const r = await http.request('GET', `${CRDS}/${plural}.bench.example.com`);
    const crd = JSON.parse(r.body.toString());
    if (crd.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True')) break;
    if (performance.now() - started > 10_000) throw new Error(`crd: ${plural} never Established`);
  }
  return { firstCreate, established: performance.now() - started, retries };
}

/** The same with kubectl: apply of the CRD, then at once a create of its kind, each its own process. */
async function withKubectl(url: string, t: number): Promise<{ apply: number; create: number } | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-crd-'));
  try {
    const plural = `gadgets${t}`;
    const kind = `Gadget${t}`;
    await writeFile(join(dir, 'crd.json'), JSON.stringify(benchCrd(plural, kind, true)));
    await writeFile(join(dir, 'object.json'), objectOf(kind, 'first', 1));
    await writeFile(join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
    const base = ['--server', url, '--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache')];
    const env = { ...process.env, HOME: dir };
    const started = performance.now();
    await run$('kubectl', [...base, 'apply', '-f', join(dir, 'crd.json')], { env, timeout: 30_000 });
    const applied = performance.now();
    await run$('kubectl', [...base, 'create', '-f', join(dir, 'object.json')], { env, timeout: 30_000 });
    return { apply: applied - started, create: performance.now() - applied };
  } catch {
    return undefined; // no kubectl on this machine: the HTTP rows stand alone
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * CPU per object of the kind's own checks in this process (prune, defaults, schema, CEL rules), with
 * the rules and without: what the rules add to a create, undistorted by the machine's load.
 */
function checkCpu(ctx: BenchContext, rules: boolean): number {
  const kind = servedAt(customKindOf(benchCrd('checks', 'Checks', rules) as KubeObject), 'v1');
  const objects = Array.from({ length: 64 }, (_, i) => JSON.parse(objectOf('Checks', `c${i}`, i).toString()) as KubeObject);
  const once = (i: number) => {
    const o = structuredClone(objects[i % objects.length]!);
    kind.prune!(o);
    kind.applyDefaults(o);
    if (kind.validate(o).length > 0) throw new Error('crd: the bench object does not validate');
  };
  const n = Math.min(ctx.opts.maxOps, 20_000);
  for (let i = 0; i < Math.min(500, n); i++) once(i);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) once(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const clients = ctx.opts.readClients;
  const runs = new Map<string, RunResult>();
  const establishing: { firstCreate: number; established: number; retries: number }[] = [];
  const kubectl: { apply: number; create: number }[] = [];
  let establishCpuMs = NaN;
  const { orchd, ready } = await startOrchd(ctx);
  try {
    const http = new HttpClient(ready.url, clients);
    for (const [plural, kind, rules] of [
      ['plains', 'Plain', false],
      ['ruled', 'Ruled', true],
    ] as const) {
      expectStatus(await http.request('POST', CRDS, Buffer.from(JSON.stringify(benchCrd(plural, kind, rules)))), 201);
    }
    for (const [plural, kind] of [
      ['plains', 'Plain'],
      ['ruled', 'Ruled'],
    ] as const) {
      const name = namer(plural);
      let n = 0;
      ctx.log(`crd: creates of ${kind} (${kind === 'Ruled' ? RULES : 0} CEL rules), ${clients} clients`);
      runs.set(
        kind,
        await closedLoop(clients, bounds(ctx), async () => expectStatus(await http.request('POST', pathOf(plural), objectOf(kind, name(n++), n), { keep: 0 }), 201), { orchd: orchd.pid }),
      );
    }
    ctx.log(`crd: ${ESTABLISH_TRIES} CRDs from create to a first create of their kind`);
    const cpuBefore = cpuSeconds(orchd.pid) ?? NaN;
    for (let t = 0; t < ESTABLISH_TRIES; t++) establishing.push(await establishOnce(http, t));
    // The server's CPU per CRD made usable (its check, its kind, the status writes, the first object): what the load does not distort.
    establishCpuMs = (((cpuSeconds(orchd.pid) ?? NaN) - cpuBefore) * 1000) / ESTABLISH_TRIES;
    for (let t = 0; t < 3; t++) {
      const k = await withKubectl(ready.url, t);
      if (k) kubectl.push(k);
    }
    http.close();
  } finally {
    await orchd.dispose();
  }

  ctx.log('crd: large CRDs installed');
  const large = await largeCrds(ctx);
  ctx.log("crd: the kind's checks in process");
  const cpuPlain = checkCpu(ctx, false);
  const cpuRuled = checkCpu(ctx, true);
  const plain = runs.get('Plain')!;
  const ruled = runs.get('Ruled')!;
  const rows: Row[] = [
    { kind: 'no rules', ...orchdFields(plain), vsPlain: 1 },
    { kind: `${RULES} CEL rules`, ...orchdFields(ruled), vsPlain: ratio(ruled.throughput, plain.throughput) },
  ];
  const first = summarize(establishing.map((e) => e.firstCreate));
  const est = summarize(establishing.map((e) => e.established));
  const targets: TargetCheck[] = [
    {
      scenario: 'crd',
      name: 'CRD create to the first create of its kind, p90 (issue 32)',
      target: `< ${ESTABLISH_TARGET_MS} ms`,
      measured: `${first.p90.toFixed(1)} ms`,
      met: first.p90 < ESTABLISH_TARGET_MS,
    },
    ...large.targets,
  ];
  return {
    id: 'crd',
    title: crd.title,
    tables: [
      {
        title: `crd: creates of a custom resource with ${RULES} CEL rules vs none`,
        columns: [col('kind', 'schema', 'text'), ...orchdColumns('creates/s'), col('vsPlain', 'vs no rules', 'ratio')],
        rows,
        notes: [
          `${clients} clients (--read-clients), closed loop; ${ctx.opts.warmupMs} ms warm-up, then ${ctx.opts.durationMs} ms measured per row. Each object's spec has ${FIELDS} fields (strings ≤ 64 characters, integers ≥ 0); the ruled kind's spec carries ${RULES} rules, one per field (\`self.fN.startsWith('v')\`, \`self.fN <= 1000+N\`), all passing.`,
          ...errorNote('no rules', plain),
          ...errorNote('rules', ruled),
        ],
      },
      {
        title: "crd: the kind's own checks of one object, in process (CPU per object)",
        columns: [col('kind', 'schema', 'text'), col('cpu', 'CPU ms per object', 'ms')],
        rows: [
          { kind: 'no rules', cpu: cpuPlain },
          { kind: `${RULES} CEL rules`, cpu: cpuRuled },
        ],
        notes: [
          `The bench object pruned, defaulted and validated (schema and rules) by the kind its CRD defines, back to back on one core; process CPU time (user + system) divided by the objects, which the machine's load does not distort.`,
        ],
      },
      {
        title: "crd: from a CRD's create to its kind in use",
        columns: [col('what', 'measured', 'text'), col('p50', 'p50 ms', 'ms'), col('p90', 'p90 ms', 'ms'), col('max', 'max ms', 'ms')],
        rows: [
          { what: 'CRD POST sent → first create of its kind answered 201', p50: first.p50, p90: first.p90, max: first.max },
          { what: 'CRD POST sent → Established read back', p50: est.p50, p90: est.p90, max: est.max },
          { what: 'orchd CPU per CRD (create, Established, first object)', p50: establishCpuMs, p90: establishCpuMs, max: establishCpuMs },
          ...(kubectl.length
            ? [
                { what: '`kubectl apply -f crd.json` (the process)', ...msOf(kubectl.map((k) => k.apply)) },
                { what: 'then `kubectl create -f object.json` (the process, no retry needed)', ...msOf(kubectl.map((k) => k.create)) },
              ]
            : []),
        ],
        notes: [
          `${ESTABLISH_TRIES} CRDs, one after another, each with the ${RULES}-rule schema; the first create is retried at once on 404 (retries in all: ${establishing.reduce((a, e) => a + e.retries, 0)}). kubectl rows: ${kubectl.length} runs, each with a fresh discovery cache.`,
        ],
      },
      ...large.tables,
    ],
    plots: [],
    targets,
    elapsedMs: performance.now() - started,
  };
}

function msOf(values: number[]): { p50: number; p90: number; max: number } {
  const s = summarize(values);
  return { p50: s.p50, p90: s.p90, max: s.max };
}

export const crd: Scenario = { id: 'crd', title: 'CustomResourceDefinitions: CEL rules per create, and a CRD to its first object', run };
