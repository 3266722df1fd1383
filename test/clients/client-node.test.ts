/**
 * @kubernetes/client-node 1.4.0 against a real orchd: KubernetesObjectApi (which discovers kind→plural
 * through the per-group-version APIResourceList), CustomObjectsApi (keeps `continue`), and Watch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi, Watch, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { startServer, type TestServer } from '../helpers/server.js';
import { failure, kubeConfigFor } from '../helpers/client-node.js';
import { sleep } from '../helpers/poll.js';

const GROUP = 'admissionregistration.orch.io';
const API_VERSION = `${GROUP}/v1`;

function policy(name: string, replicas = 5): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: { client: 'node' } },
    spec: {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }],
      },
      validations: [{ expression: `object.spec.replicas <= ${replicas}`, message: `at most ${replicas}` }],
    },
  };
}

function event(name: string): KubernetesObject & Record<string, unknown> {
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    eventTime: '2026-01-02T03:04:05.000000Z',
    reportingController: 'example.com/node',
    reportingInstance: 'node-0',
    action: 'Test',
    reason: 'Created',
    type: 'Normal',
    note: 'from client-node',
    regarding: { kind: 'ValidatingAdmissionPolicy', name: 'node-demo' },
  };
}

let server: TestServer;
let kc: KubeConfig;

beforeAll(async () => {
  server = await startServer();
  kc = kubeConfigFor(server.url);
});

afterAll(async () => {
  await server?.stop();
});

describe('KubernetesObjectApi', () => {
  it('creates, reads, lists, replaces and deletes a ValidatingAdmissionPolicy', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const created: any = await objects.create(policy('node-demo'));
    expect(created.apiVersion).toBe(API_VERSION);
    expect(created.kind).toBe('ValidatingAdmissionPolicy');
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.generation).toBe(1);
    expect(created.spec.failurePolicy).toBe('Fail'); // defaulted by the server

    const read: any = await objects.read({ apiVersion: API_VERSION, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'node-demo' } });
    expect(read.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(read.spec.validations[0].expression).toBe('object.spec.replicas <= 5');

    const list = await objects.list(API_VERSION, 'ValidatingAdmissionPolicy', undefined, undefined, undefined, undefined, undefined, 'client=node');
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['node-demo']);
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata.resourceVersion));

    const next = { ...read, spec: { ...read.spec, validations: [{ expression: 'object.spec.replicas <= 9', message: 'at most 9' }] } };
    const replaced: any = await objects.replace(next);
    expect(replaced.metadata.generation).toBe(2);
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(Number(read.metadata.resourceVersion));
    expect(replaced.spec.validations[0].expression).toBe('object.spec.replicas <= 9');

    // The optimistic lock: replacing with the version already overwritten is a Conflict the client surfaces.
    const stale = await failure(objects.replace(next));
    expect(stale.code).toBe(409);
    expect(stale.status).toMatchObject({ kind: 'Status', apiVersion: 'v1', reason: 'Conflict', code: 409 });

    const dup = await failure(objects.create(policy('node-demo')));
    expect(dup.code).toBe(409);
    expect(dup.status).toMatchObject({ kind: 'Status', reason: 'AlreadyExists', details: { name: 'node-demo', group: GROUP } });

    const deleted: any = await objects.delete({ apiVersion: API_VERSION, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'node-demo' } });
    expect(deleted.status).toBe('Success');
    const gone = await failure(objects.read({ apiVersion: API_VERSION, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'node-demo' } }));
    expect(gone.code).toBe(404);
    expect(gone.status).toMatchObject({ kind: 'Status', apiVersion: 'v1', reason: 'NotFound', code: 404 });
  });

  it('creates and lists namespaced Events, refusing an unknown namespace', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const created: any = await objects.create(event('node-ev-1'));
    expect(created.metadata.namespace).toBe('default');
    await objects.create(event('node-ev-2'));

    const inDefault = await objects.list('events.orch.io/v1', 'Event', 'default');
    expect(inDefault.items.map((o) => o.metadata?.name).sort()).toEqual(['node-ev-1', 'node-ev-2']);
    const everywhere = await objects.list('events.orch.io/v1', 'Event');
    expect(everywhere.items.map((o) => o.metadata?.name)).toEqual(expect.arrayContaining(['node-ev-1', 'node-ev-2']));

    const elsewhere = await failure(objects.create({ ...event('node-ev-3'), metadata: { name: 'node-ev-3', namespace: 'nowhere' }, regarding: { kind: 'Thing', name: 't', namespace: 'nowhere' } }));
    expect(elsewhere.code).toBe(404);
    expect(elsewhere.status).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'namespaces "nowhere" not found' });

    const readBack: any = await objects.read({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'node-ev-1', namespace: 'default' } });
    expect(readBack.note).toBe('from client-node');
    await objects.delete({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'node-ev-1', namespace: 'default' } });
    await objects.delete({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'node-ev-2', namespace: 'default' } });
  });

  it('reports an invalid object as a 422 Invalid Status with field paths', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const bad = policy('node-bad') as any;
    bad.spec.failurePolicy = 'Sometimes';
    const res = await failure(objects.create(bad));
    expect(res.code).toBe(422);
    expect(res.status).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(res.status.details.causes.map((c: any) => c.field)).toContain('spec.failurePolicy');
  });
});

describe('CustomObjectsApi', () => {
  it('lists an orch.io group page by page with continue', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const name of ['page-a', 'page-b', 'page-c']) {
      const p = policy(name);
      p.metadata!.labels = { client: 'node-pages' };
      await objects.create(p);
    }
    const custom = kc.makeApiClient(CustomObjectsApi);
    const seen: string[] = [];
    let token: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res: any = await custom.listClusterCustomObject({
        group: GROUP,
        version: 'v1',
        plural: 'validatingadmissionpolicies',
        labelSelector: 'client=node-pages',
        limit: 2,
        ...(token ? { _continue: token } : {}),
      });
      expect(res.kind).toBe('ValidatingAdmissionPolicyList');
      seen.push(...res.items.map((i: any) => i.metadata.name));
      token = res.metadata.continue || undefined;
      if (!token) break;
    }
    expect(seen).toEqual(['page-a', 'page-b', 'page-c']);
    for (const name of seen) {
      await custom.deleteClusterCustomObject({ group: GROUP, version: 'v1', plural: 'validatingadmissionpolicies', name });
    }
  });
});

describe('Watch', () => {
  it('sees ADDED, MODIFIED and DELETED for a policy, live', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const start = await objects.list(API_VERSION, 'ValidatingAdmissionPolicy');
    const seen: { type: string; name: string; rv: string }[] = [];
    let ended: unknown = 'open';
    let resolveDeleted!: () => void;
    const deletedSeen = new Promise<void>((r) => (resolveDeleted = r));
    const watcher = new Watch(kc);
    const controller = await watcher.watch(
      `/apis/${API_VERSION}/validatingadmissionpolicies`,
      { resourceVersion: start.metadata?.resourceVersion, fieldSelector: 'metadata.name=node-watched' },
      (type, obj) => {
        seen.push({ type, name: obj.metadata?.name, rv: obj.metadata?.resourceVersion });
        if (type === 'DELETED') resolveDeleted();
      },
      (err) => {
        ended = err ?? null;
      },
    );
    try {
      const created: any = await objects.create(policy('node-watched'));
      await objects.create(policy('node-unwatched')); // filtered out by the field selector
      const replaced: any = await objects.replace({ ...created, spec: { ...created.spec, failurePolicy: 'Ignore' } });
      const deleted: any = await objects.read({ apiVersion: API_VERSION, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'node-watched' } });
      await objects.delete(deleted);
      await Promise.race([deletedSeen, new Promise((_, reject) => setTimeout(() => reject(new Error(`watch saw ${JSON.stringify(seen)}`)), 15_000))]);
      expect(seen.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(seen.every((e) => e.name === 'node-watched')).toBe(true);
      expect(seen[0].rv).toBe(created.metadata.resourceVersion);
      expect(seen[1].rv).toBe(replaced.metadata.resourceVersion);
      expect(Number(seen[2].rv)).toBeGreaterThan(Number(replaced.metadata.resourceVersion));
      expect(ended).toBe('open'); // the server keeps the stream open
    } finally {
      controller.abort();
      await objects.delete(policy('node-unwatched'));
    }
  });

  it('replays from a resourceVersion and ends when the server closes at timeoutSeconds', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const start = await objects.list('events.orch.io/v1', 'Event', 'default');
    await objects.create(event('node-replay-1'));
    await objects.create(event('node-replay-2'));
    const seen: string[] = [];
    const done = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(
        '/apis/events.orch.io/v1/namespaces/default/events',
        { resourceVersion: start.metadata?.resourceVersion, timeoutSeconds: 1 },
        (type, obj) => seen.push(`${type} ${obj.metadata?.name}`),
        (err) => resolve(err),
      );
    });
    const err = await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error('watch did not end')), 15_000))]);
    expect(err).toBeNull();
    expect(seen).toEqual(['ADDED node-replay-1', 'ADDED node-replay-2']);
  });
});

describe('makeInformer', () => {
  it('lists, then follows adds, updates and deletes of Events through its watch (Accept */*)', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    await objects.create(event('inf-before'));
    const custom = kc.makeApiClient(CustomObjectsApi);
    const informer = makeInformer(
      kc,
      '/apis/events.orch.io/v1/namespaces/default/events',
      () => custom.listNamespacedCustomObject({ group: 'events.orch.io', version: 'v1', namespace: 'default', plural: 'events' }) as Promise<KubernetesListObject<KubernetesObject>>,
    );
    const seen: string[] = [];
    const errors: unknown[] = [];
    let notify = () => {};
    const record = (verb: string) => (o: KubernetesObject) => {
      seen.push(`${verb} ${o.metadata?.name}`);
      notify();
    };
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('delete', record('delete'));
    informer.on('error', (err) => errors.push(err));
    const waitFor = async (entry: string) => {
      const deadline = Date.now() + 15_000;
      while (!seen.includes(entry)) {
        if (Date.now() > deadline) throw new Error(`informer never saw "${entry}"; saw ${JSON.stringify(seen)}, errors ${String(errors)}`);
        await new Promise<void>((r) => {
          notify = r;
          setTimeout(r, 200);
        });
      }
    };
    await informer.start();
    try {
      await waitFor('add inf-before');
      const created: any = await objects.create(event('inf-live'));
      await waitFor('add inf-live');
      // An Event's note, reason and the like are immutable (as in Kubernetes); labels are not.
      await objects.replace({ ...created, metadata: { ...created.metadata, labels: { phase: 'two' } } });
      await waitFor('update inf-live');
      expect(informer.get('inf-live', 'default')?.metadata?.labels).toEqual({ phase: 'two' });
      await objects.delete({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'inf-live', namespace: 'default' } });
      await waitFor('delete inf-live');
      expect(informer.get('inf-live', 'default')).toBeUndefined();
      expect(informer.list('default').map((o) => o.metadata?.name)).toContain('inf-before');
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

describe('CoreV1Api (typed models)', () => {
  it('creates, reads, lists, replaces and deletes a Namespace', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespace({ body: { metadata: { name: 'node-ns' } } });
    expect(created.metadata?.labels).toEqual({ 'kubernetes.io/metadata.name': 'node-ns' });
    expect(created.status?.phase).toBe('Active');
    // The typed model turns creationTimestamp into a Date; the replace below sends it back with milliseconds.
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);

    const read = await core.readNamespace({ name: 'node-ns' });
    expect(read.metadata?.uid).toBe(created.metadata?.uid);
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toEqual(expect.arrayContaining(['default', 'node-ns']));
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));

    read.metadata = { ...read.metadata, labels: { ...read.metadata?.labels, tier: 'gold' } };
    const replaced = await core.replaceNamespace({ name: 'node-ns', body: read });
    expect(replaced.metadata?.labels).toEqual({ 'kubernetes.io/metadata.name': 'node-ns', tier: 'gold' });
    expect(replaced.metadata?.creationTimestamp?.getTime()).toBe(created.metadata?.creationTimestamp?.getTime());

    await core.deleteNamespace({ name: 'node-ns' });
    // Kubernetes finalizes an emptied namespace shortly after the delete; allow for that, bounded.
    const deadline = Date.now() + 10_000;
    let names: (string | undefined)[] = [];
    do {
      names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
      if (!names.includes('node-ns')) break;
      await sleep(200);
    } while (Date.now() < deadline);
    expect(names).not.toContain('node-ns');
  });
});
