/**
 * Real operators' CRDs, installed as a new user installs them: the Gateway API's standard CRDs
 * (test/fixtures/crds/gateway-api, Apache-2.0, see SOURCE.md there), each file unchanged but for
 * `apiVersion: apiextensions.k8s.io/v1` → `apiextensions.orch.io/v1`. They sit in a protected group
 * and carry their api-approved annotation, use escaped-free CEL with has() on list items, optionals,
 * map-key rules and nested unbounded lists. Every example the project ships is created, and every
 * object of its own invalid examples that kube-apiserver refuses is refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../helpers/poll.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

const DIR = fileURLToPath(new URL('../fixtures/crds/gateway-api/', import.meta.url));
const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const GROUP = 'gateway.networking.k8s.io';

const docs = (path: string, rewrite = false): any[] => {
  let text = readFileSync(path, 'utf8');
  if (rewrite) text = text.replace(/^apiVersion: apiextensions\.k8s\.io\/v1$/m, 'apiVersion: apiextensions.orch.io/v1');
  return parseAllDocuments(text)
    .map((d) => d.toJSON())
    .filter((d) => d && typeof d === 'object');
};
const yamlIn = (dir: string) => readdirSync(DIR + dir).filter((f) => f.endsWith('.yaml')).sort();
/** The example files with an object of the Gateway API (some hold only the namespaces others use). */
const examplesIn = (dir: string) => yamlIn(dir).filter((f) => docs(`${DIR}${dir}/${f}`).some((o) => String(o.apiVersion).startsWith(`${GROUP}/`)));

let server: TestServer;
/** kind → plural and scope, from the CRDs themselves. */
const kinds = new Map<string, { plural: string; namespaced: boolean }>();

beforeAll(async () => {
  server = await startServer();
  for (const f of yamlIn('')) {
    for (const crd of docs(DIR + f, true)) {
      kinds.set(crd.spec.names.kind, { plural: crd.spec.names.plural, namespaced: crd.spec.scope === 'Namespaced' });
    }
  }
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** Where an example object is created: its own namespace per file, so names never collide. */
function pathOf(obj: any, ns: string): string | undefined {
  const [group, version] = String(obj.apiVersion).split('/');
  if (group !== GROUP) return undefined;
  const k = kinds.get(obj.kind);
  if (!k) return undefined;
  return k.namespaced ? `/apis/${group}/${version}/namespaces/${ns}/${k.plural}` : `/apis/${group}/${version}/${k.plural}`;
}

let nsCount = 0;
async function namespace(): Promise<string> {
  const name = `ex-${++nsCount}`;
  expect((await call(server.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status).toBe(201);
  return name;
}

describe('the Gateway API CRDs', () => {
  it('install unchanged and are Established', async () => {
    const names: string[] = [];
    for (const f of yamlIn('')) {
      for (const crd of docs(DIR + f, true)) {
        const r = await call(server.url, 'POST', CRDS, crd);
        expect(r.status, `${f}: ${JSON.stringify(r.body.message ?? '').slice(0, 2000)}`).toBe(201);
        names.push(crd.metadata.name);
      }
    }
    expect(names.length).toBe(10);
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

  it.each(examplesIn('examples'))('example %s is created', async (file) => {
    const ns = await namespace();
    let created = 0;
    for (const obj of docs(`${DIR}examples/${file}`)) {
      const path = pathOf(obj, ns);
      if (!path) continue;
      const r = await call(server.url, 'POST', path, { ...obj, metadata: { ...obj.metadata, ...(kinds.get(obj.kind)?.namespaced ? { namespace: ns } : {}) } });
      // A cluster-scoped GatewayClass of the same name may come from an earlier file.
      expect([201, 409], `${obj.kind} ${obj.metadata?.name}: ${JSON.stringify(r.body.message ?? '').slice(0, 1500)}`).toContain(r.status);
      if (r.status === 409) expect(r.body.reason).toBe('AlreadyExists');
      created++;
    }
    expect(created).toBeGreaterThan(0);
  });

  it.each(examplesIn('invalid-examples'))('invalid example %s is refused', async (file) => {
    const ns = await namespace();
    const statuses: number[] = [];
    for (const obj of docs(`${DIR}invalid-examples/${file}`)) {
      const path = pathOf(obj, ns);
      if (!path) continue;
      const r = await call(server.url, 'POST', path, { ...obj, metadata: { ...obj.metadata, ...(kinds.get(obj.kind)?.namespaced ? { namespace: ns } : {}) } });
      statuses.push(r.status);
      if (r.status === 422) expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    }
    expect(statuses).toContain(422);
  });
});
