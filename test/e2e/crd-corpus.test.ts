/**
 * Real operators' CRDs, installed as a new user installs them: the Gateway API's standard CRDs and
 * the Prometheus Operator's ten (test/fixtures/crds/<project>, Apache-2.0, see SOURCE.md there),
 * each file unchanged but for `apiVersion: apiextensions.k8s.io/v1` → `apiextensions.orch.io/v1`.
 * The Gateway API's sit in a protected group with their api-approved annotation and use has() on
 * list items, optionals, map-key rules and nested unbounded lists; the Prometheus Operator's are
 * up to 800 kB each. Every example the projects ship is created, and each of the Gateway API's own
 * invalid examples (objects kube-apiserver refuses) is refused.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../helpers/poll.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const CORPORA = [
  { project: 'gateway-api', group: 'gateway.networking.k8s.io', crds: 10 },
  { project: 'prometheus-operator', group: 'monitoring.coreos.com', crds: 10 },
];
const dirOf = (project: string) => fileURLToPath(new URL(`../fixtures/crds/${project}/`, import.meta.url));

const docs = (path: string, rewrite = false): any[] => {
  let text = readFileSync(path, 'utf8');
  if (rewrite) text = text.replace(/^apiVersion: apiextensions\.k8s\.io\/v1$/m, 'apiVersion: apiextensions.orch.io/v1');
  return parseAllDocuments(text)
    .map((d) => d.toJSON())
    .filter((d) => d && typeof d === 'object');
};
const yamlIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
    : [];
/** The example files with an object of the project's group (some hold only the namespaces others use). */
const examplesIn = (dir: string, group: string) => yamlIn(dir).filter((f) => docs(dir + f).some((o) => String(o.apiVersion).startsWith(`${group}/`)));

let server: TestServer;
/** kind → plural and scope, from the CRDs themselves. */
const kinds = new Map<string, { plural: string; namespaced: boolean }>();

beforeAll(async () => {
  server = await startServer();
  for (const c of CORPORA) {
    for (const f of yamlIn(dirOf(c.project))) {
      for (const crd of docs(dirOf(c.project) + f, true)) {
        kinds.set(`${crd.spec.group}/${crd.spec.names.kind}`, { plural: crd.spec.names.plural, namespaced: crd.spec.scope === 'Namespaced' });
      }
    }
  }
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** Where an example object is created: its own namespace per file, so names never collide. */
function pathOf(obj: any, ns: string): string | undefined {
  const [group, version] = String(obj.apiVersion).split('/');
  const k = kinds.get(`${group}/${obj.kind}`);
  if (!k) return undefined;
  return k.namespaced ? `/apis/${group}/${version}/namespaces/${ns}/${k.plural}` : `/apis/${group}/${version}/${k.plural}`;
}

let nsCount = 0;
async function namespace(): Promise<string> {
  const name = `ex-${++nsCount}`;
  expect((await call(server.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status).toBe(201);
  return name;
}

describe.each(CORPORA)('the $project CRDs', ({ project, group, crds }) => {
  const dir = dirOf(project);
  const namespacedIn = (obj: any) => kinds.get(`${String(obj.apiVersion).split('/')[0]}/${obj.kind}`)?.namespaced;

  it('install unchanged and are Established', async () => {
    const names: string[] = [];
    for (const f of yamlIn(dir)) {
      for (const crd of docs(dir + f, true)) {
        const r = await call(server.url, 'POST', CRDS, crd);
        expect(r.status, `${f}: ${JSON.stringify(r.body.message ?? '').slice(0, 2000)}`).toBe(201);
        names.push(crd.metadata.name);
      }
    }
    expect(names.length).toBe(crds);
    for (const name of names) {
      await eventually(
        async () => {
          const c = await call(server.url, 'GET', `${CRDS}/${name}`);
          return (c.body.status?.conditions ?? []).some((x: any) => x.type === 'Established' && x.status === 'True');
        },
        { what: `${name} Established` },
      );
    }
  }, 120_000);

  it.each(examplesIn(`${dir}examples/`, group))('example %s is created', async (file) => {
    const ns = await namespace();
    let created = 0;
    for (const obj of docs(`${dir}examples/${file}`)) {
      const path = pathOf(obj, ns);
      if (!path) continue;
      const r = await call(server.url, 'POST', path, { ...obj, metadata: { ...obj.metadata, ...(namespacedIn(obj) ? { namespace: ns } : {}) } });
      // A cluster-scoped object of the same name (a GatewayClass) may come from an earlier file.
      expect([201, 409], `${obj.kind} ${obj.metadata?.name}: ${JSON.stringify(r.body.message ?? '').slice(0, 1500)}`).toContain(r.status);
      if (r.status === 409) expect(r.body.reason).toBe('AlreadyExists');
      created++;
    }
    expect(created).toBeGreaterThan(0);
  });

  it.each(examplesIn(`${dir}invalid-examples/`, group))('invalid example %s is refused', async (file) => {
    const ns = await namespace();
    const statuses: number[] = [];
    for (const obj of docs(`${dir}invalid-examples/${file}`)) {
      const path = pathOf(obj, ns);
      if (!path) continue;
      const r = await call(server.url, 'POST', path, { ...obj, metadata: { ...obj.metadata, ...(namespacedIn(obj) ? { namespace: ns } : {}) } });
      statuses.push(r.status);
      if (r.status === 422) expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    }
    expect(statuses).toContain(422);
  });
});
