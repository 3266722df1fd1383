/**
 * The certificates example's tests: one orchd for the file (its CRD installed at start), reset()
 * between tests; what kube-apiserver would refuse, orchd refuses too, so these pass only where
 * production would.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi, KubernetesObjectApi } from '@kubernetes/client-node';
import { startOrchd, type Orchd } from 'orchd';
import { CERTIFICATES, FINALIZER, startCertificates, type Certificate, type Controller } from './controller.js';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1', // as upstream CRD files come; orchd serves it as apiextensions.orch.io
  kind: 'CustomResourceDefinition',
  metadata: { name: 'certificates.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'certificates', kind: 'Certificate' },
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
              spec: { type: 'object', required: ['secretName'], properties: { secretName: { type: 'string' }, commonName: { type: 'string' } } },
              status: { type: 'object', properties: { ready: { type: 'boolean' }, observedGeneration: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

let orchd: Orchd;
let controller: Controller;
let custom: CustomObjectsApi;
let core: CoreV1Api;
beforeAll(async () => {
  orchd = await startOrchd({ crds: [crd] });
  custom = orchd.kubeConfig().makeApiClient(CustomObjectsApi);
  core = orchd.kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(() => orchd.stop());
beforeEach(async () => {
  await orchd.reset();
  await core.createNamespace({ body: { metadata: { name: 'certs' } } });
  controller = startCertificates(orchd.kubeConfig(), { namespace: 'certs', identity: 'controller-a' });
  await controller.synced;
  await orchd.watchers({ atLeast: 1 });
});
afterEach(() => controller.stop());

const certificate = (name: string, commonName = 'example.com') => ({ apiVersion: 'example.com/v1', kind: 'Certificate', metadata: { name }, spec: { secretName: `${name}-tls`, commonName } });
const read = async (name: string) => (await custom.getNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', name })) as Certificate;

describe('certificates controller', () => {
  it('issues a Secret, reports Ready for the generation it saw, and records one core Event', async () => {
    await custom.createNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', body: certificate('web') });
    await orchd.settled({ quietMs: 200 });
    const cert = await read('web');
    expect(cert.metadata?.finalizers).toEqual([FINALIZER]);
    expect(cert.status).toEqual({ ready: true, observedGeneration: 1 });
    const secret = await core.readNamespacedSecret({ name: 'web-tls', namespace: 'certs' });
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Buffer.from(secret.data!['tls.crt'], 'base64').toString()).toBe('CERT for example.com');
    // Exactly once: the writes have settled, and one Event was recorded.
    const events = await core.listNamespacedEvent({ namespace: 'certs', fieldSelector: 'involvedObject.name=web,reason=Issued' });
    expect(events.items).toHaveLength(1);
    // Who wrote what, from the log.
    const versions = await orchd.history<Certificate>('certificates', 'certs', 'web');
    expect(versions.map((v) => [v.verb, v.subresource ?? '', v.object.status?.ready ?? false])).toEqual([
      ['create', '', false],
      ['update', '', false],
      ['update', 'status', true],
    ]);
  });

  it('holds the Lease; a second candidate with a stale version loses', async () => {
    const objects = KubernetesObjectApi.makeApiClient(orchd.kubeConfig());
    const lease: any = await objects.read({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'certificates-controller', namespace: 'default' } });
    expect(lease.spec.holderIdentity).toBe('controller-a');
    await objects.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'controller-b' } });
    await expect(objects.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'controller-c' } })).rejects.toMatchObject({ code: 409 });
  });

  it('a changed spec bumps the generation and is issued again', async () => {
    await custom.createNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', body: certificate('api') });
    await orchd.settled({ quietMs: 200 });
    const cert = await read('api');
    await custom.replaceNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', name: 'api', body: { ...cert, spec: { ...cert.spec, commonName: 'api.example.com' } } });
    await orchd.settled({ quietMs: 200 });
    expect((await read('api')).status).toEqual({ ready: true, observedGeneration: 2 });
    const secret = await core.readNamespacedSecret({ name: 'api-tls', namespace: 'certs' });
    expect(Buffer.from(secret.data!['tls.crt'], 'base64').toString()).toBe('CERT for api.example.com');
  });

  it('a deleted Certificate: generation bumped with the mark, its Secret deleted, then it goes', async () => {
    await custom.createNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', body: certificate('old') });
    await orchd.settled({ quietMs: 200 });
    const marked = (await custom.deleteNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', name: 'old' })) as Certificate;
    expect(marked.metadata?.generation).toBe(2);
    await orchd.settled({ quietMs: 200 });
    await expect(read('old')).rejects.toMatchObject({ code: 404 });
    await expect(core.readNamespacedSecret({ name: 'old-tls', namespace: 'certs' })).rejects.toMatchObject({ code: 404 });
  });

  it('a deleted namespace stays Terminating, refusing new Certificates, until the controller lets its Certificate go; then it goes', async () => {
    await custom.createNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', body: certificate('ns-held') });
    await orchd.settled({ quietMs: 200 });
    await controller.stop(); // the controller is down: its finalizer holds the namespace
    await core.deleteNamespace({ name: 'certs' });
    await orchd.settled({ quietMs: 200 });
    expect((await core.readNamespace({ name: 'certs' })).status?.phase).toBe('Terminating');
    await expect(custom.createNamespacedCustomObject({ ...CERTIFICATES, namespace: 'certs', body: certificate('late') })).rejects.toMatchObject({ code: 403 });
    // Back up: it lets the Certificate go (its Secret deleted, its finalizer removed), and the namespace goes.
    controller = startCertificates(orchd.kubeConfig(), { namespace: 'certs', identity: 'controller-a' });
    await controller.synced;
    await orchd.settled({ quietMs: 300 });
    await expect(core.readNamespace({ name: 'certs' })).rejects.toMatchObject({ code: 404 });
    expect(await orchd.state({ namespace: 'certs' })).toEqual([]);
  });
});
