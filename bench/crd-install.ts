/**
 * crd (issue 37): installing large CRDs. A synthetic CRD of about 2 MB of JSON with 100 CEL rules
 * (the size of the largest operators' CRDs, with Gateway API's density of rules) is created over
 * HTTP: the time to its 201 is what `kubectl apply` waits for (target < 300 ms). Then 30 CRDs of
 * about 500 kB each (a Prometheus Operator's prometheuses CRD's size) are installed in a fresh
 * server, and its resident memory read back (target < 250 MB RSS).
 */
import { expectStatus, HttpClient } from './http-client.js';
import { memory, waitIdle } from './proc.js';
import { col, type Table, type TargetCheck } from './result.js';
import { summarize } from './stats.js';
import { startOrchd, type BenchContext } from './context.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const INSTALL_TRIES = 5;
const INSTALL_TARGET_MS = 300;
const MANY = 30;
const RSS_TARGET_MB = 250;

const text = (n: number, seed: string) => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);

/**
 * `groups` objects under spec, each of `fields` documented fields (strings, integers, lists of
 * strings, a map), and a rule on each group while rules last: about 22 kB of JSON a group.
 */
export function largeCrd(plural: string, groups: number, rules: number): object {
  const group = (g: number) => ({
    type: 'object',
    description: text(400, `Group ${g} holds settings of one part of the workload.`),
    properties: Object.fromEntries(
      Array.from({ length: 60 }, (_, f) => [
        `field${f}`,
        f % 4 === 0
          ? { type: 'integer', format: 'int32', minimum: 0, description: text(280, `Field ${f}, a count.`) }
          : f % 4 === 1
            ? { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 253 }, 'x-kubernetes-list-type': 'set', description: text(280, `Field ${f}, names.`) }
            : f % 4 === 2
              ? { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 63 }, description: text(280, `Field ${f}, labels.`) }
              : { type: 'string', maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: text(280, `Field ${f}, a name.`) },
      ]),
    ),
    ...(g < rules
      ? {
          // Rules spread over the groups: the first ones get two when there are more rules than groups.
          'x-kubernetes-validations': Array.from({ length: Math.floor(rules / groups) + (g < rules % groups ? 1 : 0) }, (_, r) => ({
            rule: `!has(self.field${3 + 4 * r}) || self.field${3 + 4 * r}.size() <= 63 || self.field0 > ${g}`,
            message: `group ${g}: field${3 + 4 * r} too long`,
          })),
        }
      : {}),
  });
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.bench.example.com` },
    spec: {
      group: 'bench.example.com',
      scope: 'Namespaced',
      names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: Object.fromEntries(Array.from({ length: groups }, (_, g) => [`group${g}`, group(g)])) },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

export interface LargeCrdResult {
  tables: Table[];
  targets: TargetCheck[];
}

export async function largeCrds(ctx: BenchContext): Promise<LargeCrdResult> {
  const install: number[] = [];
  let bytes = 0;
  let rssMb = NaN;
  let manyBytes = 0;
  let manyMs = NaN;
  {
    const { orchd, ready } = await startOrchd(ctx);
    try {
      const http = new HttpClient(ready.url, 1);
      for (let t = 0; t < INSTALL_TRIES + 1; t++) {
        const body = Buffer.from(JSON.stringify(largeCrd(`larges${t}`, 84, 100)));
        bytes = body.length;
        const started = performance.now();
        expectStatus(await http.request('POST', CRDS, body), 201);
        // The first is the server's warm-up (its code compiled on first use), not counted.
        if (t > 0) install.push(performance.now() - started);
      }
      http.close();
    } finally {
      await orchd.dispose();
    }
  }
  {
    ctx.log(`crd: ${MANY} large CRDs in a fresh server, then its RSS`);
    const { orchd, ready } = await startOrchd(ctx);
    try {
      const http = new HttpClient(ready.url, 1);
      const started = performance.now();
      for (let t = 0; t < MANY; t++) {
        const body = Buffer.from(JSON.stringify(largeCrd(`many${t}s`, 23, 25)));
        manyBytes = body.length;
        expectStatus(await http.request('POST', CRDS, body), 201);
      }
      manyMs = performance.now() - started;
      await waitIdle(orchd.pid);
      rssMb = (memory(orchd.pid)?.rss ?? NaN) / 1024 / 1024;
      http.close();
    } finally {
      await orchd.dispose();
    }
  }
  const s = summarize(install);
  return {
    tables: [
      {
        title: 'crd: installing large CRDs',
        columns: [col('what', 'measured', 'text'), col('value', 'value', 'ms'), col('unit', 'unit', 'text')],
        rows: [
          { what: `a ${(bytes / 1e6).toFixed(2)} MB CRD with 100 CEL rules: POST → 201, median`, value: s.p50, unit: 'ms' },
          { what: 'the same, slowest', value: s.max, unit: 'ms' },
          { what: `${MANY} CRDs of ${(manyBytes / 1e3).toFixed(0)} kB (25 rules each): all created`, value: manyMs, unit: 'ms' },
          { what: `the server's RSS with the ${MANY} installed, once idle`, value: rssMb, unit: 'MB' },
        ],
        notes: [
          `${INSTALL_TRIES} large CRDs one after another (after one not counted), each checked whole (structural schema, every rule compiled and its cost estimated) and stored; the RSS is read from /proc once the server is idle after the last create.`,
        ],
      },
    ],
    targets: [
      { scenario: 'crd', name: 'a 2 MB CRD with ~100 CEL rules installs, median (issue 37)', target: `< ${INSTALL_TARGET_MS} ms`, measured: `${s.p50.toFixed(0)} ms`, met: s.p50 < INSTALL_TARGET_MS },
      { scenario: 'crd', name: `${MANY} large CRDs installed: server RSS (issue 37)`, target: `< ${RSS_TARGET_MB} MB`, measured: `${rssMb.toFixed(0)} MB`, met: rssMb < RSS_TARGET_MB },
    ],
  };
}
