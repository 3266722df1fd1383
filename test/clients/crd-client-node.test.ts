/**
 * @kubernetes/client-node 1.4.0 driving the five CustomResourceDefinitions of fixtures/crds against a
 * real orchd: the CRDs created through CustomObjectsApi,
 * each kind used at once by the generic client (create, read, merge patch, server-side apply,
 * delete) and by CustomObjectsApi (list, status, scale), an informer over a custom resource that
 * follows its changes, and the refusals as client-node reports them (code 422 and the Status).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, KubeConfig, KubernetesObjectApi, PatchStrategy, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startServer, type TestServer } from '../helpers/server.js';
import { failure, kubeConfigFor } from '../helpers/client-node.js';
import { sleep } from '../helpers/poll.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/crds/', import.meta.url));
const docs = (file: string): any[] => parseAllDocuments(readFileSync(FIXTURES + file, 'utf8')).map((d) => d.toJS());

let server: TestServer;
let kc: KubeConfig;
let objects: KubernetesObjectApi;
let custom: CustomObjectsApi;

beforeAll(async () => {
  server = await startServer();
  kc = kubeConfigFor(server.url);
  objects = KubernetesObjectApi.makeApiClient(kc);
  custom = kc.makeApiClient(CustomObjectsApi);
});
afterAll(() => server?.stop());

async function established(name: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; await sleep(10)) {
    const crd: any = await custom.getClusterCustomObject({ group: 'apiextensions.orch.io', version: 'v1', plural: 'customresourcedefinitions', name });
    if (crd.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`${name} not Established`);
  }
}

describe('client-node and five CustomResourceDefinitions', () => {
  it('creates the CRDs through CustomObjectsApi, then uses every kind with no restart', async () => {
    // (KubernetesObjectApi would run a CRD through its own model of CustomResourceDefinition, whose
    // camelCase fields drop the schema's x-kubernetes-* keys, as it does against kube-apiserver.)
    for (const crd of docs('crds.yaml')) await custom.createClusterCustomObject({ group: 'apiextensions.orch.io', version: 'v1', plural: 'customresourcedefinitions', body: crd });
    for (const crd of docs('crds.yaml')) await established(crd.metadata.name);
    const created: any[] = [];
    for (const o of docs('objects.yaml')) created.push(await objects.create(o));
    expect(created.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['WebApp/shop', 'Gateway/edge', 'Budget/shop', 'Blueprint/starter', 'Certificate/shop-tls']);
    // What the server filled in: defaults, and nothing pruned from embedded resources.
    expect(created[0].spec.paused).toBe(false);
    expect(created[1].spec.routes.map((r: any) => r.method)).toEqual(['GET', 'POST']);
    expect(created[3].spec.template.spec.anything).toEqual(['goes', 'here']);
    expect(created[4].spec).toMatchObject({ duration: '2160h', renewBefore: '360h' });
  });

  it('reads, merge-patches, applies and deletes through KubernetesObjectApi', async () => {
    const ref = { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'shop', namespace: 'default' } };
    const read: any = await objects.read(ref);
    expect(read.spec.template.spec.containers[0].image).toBe('shop:1.0');
    const patched: any = await objects.patch({ ...ref, spec: { replicas: 3 } } as KubernetesObject, undefined, undefined, 'client-node', undefined, PatchStrategy.MergePatch);
    expect(patched.spec.replicas).toBe(3);
    expect(patched.metadata.generation).toBe(2);
    const applied: any = await objects.patch(
      { ...ref, spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'proxy:1' }] } } } } as KubernetesObject,
      undefined,
      undefined,
      'mesh',
      true,
      PatchStrategy.ServerSideApply,
    );
    // A map list keyed by name: the applied container joins the one another manager owns.
    expect(applied.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['web', 'sidecar']);
    await objects.delete({ apiVersion: 'policy.example.com/v1', kind: 'Budget', metadata: { name: 'shop', namespace: 'default' } });
    expect((await failure(objects.read({ apiVersion: 'policy.example.com/v1', kind: 'Budget', metadata: { name: 'shop', namespace: 'default' } }))).code).toBe(404);
  });

  it('lists, writes status and scales through CustomObjectsApi', async () => {
    const list: any = await custom.listClusterCustomObject({ group: 'net.example.com', version: 'v1', plural: 'gateways' });
    expect(list.items.map((g: any) => g.metadata.name)).toEqual(['edge']);
    const cert: any = await custom.getNamespacedCustomObject({ group: 'security.example.com', version: 'v1', namespace: 'default', plural: 'certificates', name: 'shop-tls' });
    const withStatus: any = await custom.replaceNamespacedCustomObjectStatus({
      group: 'security.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'certificates',
      name: 'shop-tls',
      body: { ...cert, status: { revision: 2 } },
    });
    expect(withStatus.status).toEqual({ revision: 2 });
    // The status transition rule: revision may only grow.
    const back = await failure(
      custom.replaceNamespacedCustomObjectStatus({
        group: 'security.example.com',
        version: 'v1',
        namespace: 'default',
        plural: 'certificates',
        name: 'shop-tls',
        body: { ...withStatus, status: { revision: 1 } },
      }),
    );
    expect(back.code).toBe(422);
    expect(back.status.details.causes).toEqual([{ reason: 'FieldValueForbidden', message: 'Forbidden: revision may only grow', field: 'status.revision' }]);
    const scale: any = await custom.getNamespacedCustomObjectScale({ group: 'apps.example.com', version: 'v1', namespace: 'default', plural: 'webapps', name: 'shop' });
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 3 } });
    const scaled: any = await custom.replaceNamespacedCustomObjectScale({
      group: 'apps.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'webapps',
      name: 'shop',
      body: { ...scale, spec: { replicas: 7 } },
    });
    expect(scaled.spec.replicas).toBe(7);
  });

  it('an informer follows a custom resource: adds, updates, deletes', async () => {
    const informer = makeInformer(
      kc,
      '/apis/net.example.com/v1/namespaces/default/gateways',
      () => custom.listNamespacedCustomObject({ group: 'net.example.com', version: 'v1', namespace: 'default', plural: 'gateways' }) as Promise<KubernetesListObject<KubernetesObject>>,
    );
    const seen: string[] = [];
    for (const type of ['add', 'update', 'delete'] as const) informer.on(type, (o) => seen.push(`${type} ${o.metadata?.name}`));
    await informer.start();
    try {
      const gateway = {
        apiVersion: 'net.example.com/v1',
        kind: 'Gateway',
        metadata: { name: 'inner', namespace: 'default' },
        spec: { className: 'internal', listeners: [{ name: 'h', port: 80, protocol: 'HTTP' }] },
      };
      await objects.create(gateway);
      await objects.patch({ ...gateway, spec: { className: 'mesh' } } as KubernetesObject, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
      await objects.delete(gateway);
      for (const deadline = Date.now() + 10_000; !seen.includes('delete inner'); await sleep(10)) {
        if (Date.now() > deadline) throw new Error(`the informer saw ${seen.join(', ')}`);
      }
      expect(seen).toEqual(['add edge', 'add inner', 'update inner', 'delete inner']);
    } finally {
      await informer.stop();
    }
  });

  it("reports the schema's and the rules' refusals as client-node reads them", async () => {
    const bad = await failure(
      objects.create({
        apiVersion: 'apps.example.com/v1',
        kind: 'WebApp',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { replicas: -1, template: { spec: { containers: [] } } },
      } as KubernetesObject),
    );
    expect(bad.code).toBe(422);
    expect(bad.status.details.causes.map((c: any) => [c.reason, c.field])).toEqual([
      ['FieldValueInvalid', 'spec.replicas'],
      ['FieldValueInvalid', 'spec.template.spec.containers'],
      // The scale subresource's own check of the replicas it reads, as kube-apiserver adds it.
      ['FieldValueInvalid', '.spec.replicas'],
    ]);
    const immutable = await failure(
      objects.patch(
        { apiVersion: 'security.example.com/v1', kind: 'Certificate', metadata: { name: 'shop-tls', namespace: 'default' }, spec: { issuer: 'other' } } as KubernetesObject,
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      ),
    );
    expect(immutable.code).toBe(422);
    expect(immutable.status.message).toBe('Certificate.security.example.com "shop-tls" is invalid: spec: Invalid value: issuer is immutable');
  });
});
