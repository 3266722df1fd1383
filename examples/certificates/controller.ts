/**
 * A cert-manager-style example controller, written with @kubernetes/client-node as for
 * kube-apiserver: it takes a Lease before it acts (leader election), and for each Certificate
 * (example.com/v1) it adds a finalizer, writes the Secret named by spec.secretName (type
 * kubernetes.io/tls, through stringData), records a core v1 Event, and writes status through /status
 * with the resourceVersion it read (observedGeneration, Ready). A Certificate being deleted has its
 * Secret deleted and its finalizer removed. Its tests (controller.test.ts) run it against orchd.
 */
import { CoreV1Api, CustomObjectsApi, KubernetesObjectApi, makeInformer, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

export const FINALIZER = 'example.com/certificates';
export const CERTIFICATES = { group: 'example.com', version: 'v1', plural: 'certificates' };
const LEASE_NAME = 'certificates-controller';
const LEASE_API = 'coordination.orch.io/v1';

export interface Certificate extends KubernetesObject {
  spec: { secretName: string; commonName: string };
  status?: { ready?: boolean; observedGeneration?: number };
}

export interface Controller {
  /** Resolves once the Lease is held and the informer has listed. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

/** namespace: where the Certificates are watched; the Lease is taken in leaseNamespace (default: default). */
export function startCertificates(kc: KubeConfig, o: { namespace: string; identity: string; leaseNamespace?: string }): Controller {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const informer = makeInformer<Certificate>(kc, `/apis/example.com/v1/namespaces/${o.namespace}/certificates`, () => custom.listNamespacedCustomObject({ ...CERTIFICATES, namespace: o.namespace }));
  let stopped = false;

  /** Leader election's first step: create the Lease, or take it over with its resourceVersion (a 409 means another won). */
  const takeLease = async () => {
    const spec = { holderIdentity: o.identity, leaseDurationSeconds: 15, renewTime: new Date().toISOString().replace('Z', '000Z') };
    const lease = { apiVersion: LEASE_API, kind: 'Lease', metadata: { name: LEASE_NAME, namespace: o.leaseNamespace ?? 'default' } };
    const current = (await objects.read(lease).catch(() => undefined)) as (KubernetesObject & { spec?: { holderIdentity?: string } }) | undefined;
    if (!current) await objects.create({ ...lease, spec } as KubernetesObject);
    else await objects.replace({ ...current, spec: { ...current.spec, ...spec } } as KubernetesObject);
  };

  const event = (cert: Certificate, reason: string, message: string) =>
    core.createNamespacedEvent({
      namespace: o.namespace,
      body: {
        metadata: { name: `${cert.metadata!.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 6)}` },
        involvedObject: { apiVersion: 'example.com/v1', kind: 'Certificate', name: cert.metadata!.name, namespace: o.namespace, uid: cert.metadata!.uid },
        reason,
        message,
        type: 'Normal',
        source: { component: 'certificates-controller' },
        count: 1,
        firstTimestamp: new Date(),
        lastTimestamp: new Date(),
      },
    });

  const reconcile = async (cert: Certificate) => {
    const { name } = cert.metadata!;
    if (cert.metadata!.deletionTimestamp) {
      if (!cert.metadata!.finalizers?.includes(FINALIZER)) return;
      await core.deleteNamespacedSecret({ name: cert.spec.secretName, namespace: o.namespace }).catch(ignore(404));
      await custom.replaceNamespacedCustomObject({
        ...CERTIFICATES,
        namespace: o.namespace,
        name: name!,
        body: { ...cert, metadata: { ...cert.metadata, finalizers: cert.metadata!.finalizers.filter((f) => f !== FINALIZER) } },
      });
      return;
    }
    if (!cert.metadata!.finalizers?.includes(FINALIZER)) {
      // The write carries the resourceVersion read: a replace of a custom resource must (422 without it).
      await custom.replaceNamespacedCustomObject({
        ...CERTIFICATES,
        namespace: o.namespace,
        name: name!,
        body: { ...cert, metadata: { ...cert.metadata, finalizers: [...(cert.metadata!.finalizers ?? []), FINALIZER] } },
      });
      return; // the informer brings the new version
    }
    if (cert.status?.ready && cert.status.observedGeneration === cert.metadata!.generation) return;
    const secret = {
      metadata: { name: cert.spec.secretName, ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Certificate', name: name!, uid: cert.metadata!.uid!, controller: true }] },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': `CERT for ${cert.spec.commonName}`, 'tls.key': 'KEY' },
    };
    await core.createNamespacedSecret({ namespace: o.namespace, body: secret }).catch(async (err: unknown) => {
      if (codeOf(err) !== 409) throw err;
      await core.replaceNamespacedSecret({ name: cert.spec.secretName, namespace: o.namespace, body: secret });
    });
    await custom.replaceNamespacedCustomObjectStatus({
      ...CERTIFICATES,
      namespace: o.namespace,
      name: name!,
      body: { ...cert, status: { ready: true, observedGeneration: cert.metadata!.generation } },
    });
    await event(cert, 'Issued', `Certificate issued into Secret ${cert.spec.secretName}`);
  };

  // One Certificate at a time, in order; a conflict or a vanished object waits for the informer's next version.
  let queue = Promise.resolve();
  const handle = (cert: Certificate) => {
    queue = queue.then(() => (stopped ? undefined : reconcile(cert).catch(ignore(404, 409))));
  };
  informer.on('add', handle);
  informer.on('update', handle);
  informer.on('error', () => {
    if (!stopped) setTimeout(() => void (stopped ? undefined : informer.start().catch(() => undefined)), 100);
  });

  const synced = takeLease().then(() => informer.start());
  return {
    synced,
    async stop() {
      stopped = true;
      await informer.stop();
      await queue;
    },
  };
}

const codeOf = (err: unknown) => (err as { code?: number }).code;
const ignore =
  (...codes: number[]) =>
  (err: unknown) => {
    if (!codes.includes(codeOf(err) ?? 0)) throw err;
  };
