/**
 * startOrchd end to end: a real orchd in this process on a memory log (and on LevelDB), driven by
 * @kubernetes/client-node through the KubeConfig it hands out and by raw HTTP; history, state,
 * waitForVersion and reset asserted on real writes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { loadClientNode } from '../../src/embed/client-node.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, CustomObjectsApi, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { generateSelfSigned } from '../../src/http/certificates.js';
import { OrchdExpiredError, startOrchd, type Orchd } from '../../src/index.js';
import { WebhookServer } from '../admission/webhook-server.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

const event = (name: string, labels?: Record<string, string>): KubernetesObject & Record<string, unknown> => ({
  apiVersion: 'events.orch.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
  eventTime: '2026-01-02T03:04:05.000000Z',
  reportingController: 'example.com/embed',
  reportingInstance: 'embed-0',
  action: 'Test',
  reason: 'Created',
  type: 'Normal',
  note: 'from the embed test',
});

const EVENTS = '/apis/events.orch.io/v1/namespaces/default/events';

async function get(api: Orchd, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(api.url + path);
  return { status: res.status, body: await res.json() };
}

const names = (objects: readonly { metadata?: { name?: string } }[]) => objects.map((o) => o.metadata?.name);

describe('startOrchd on a memory log', () => {
  let api: Orchd;
  let objects: KubernetesObjectApi;
  beforeAll(async () => {
    api = await startOrchd({ storage: 'memory' });
    objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('listens on a free loopback port and hands out a KubeConfig and a kubeconfig for it', async () => {
    expect(api.url).toBe(`http://127.0.0.1:${api.port}`);
    expect(api.port).toBeGreaterThan(0);
    expect(api.kubeConfig().getCurrentCluster()?.server).toBe(api.url);
    expect(api.kubeconfigYaml()).toContain(`server: ${api.url}`);
    expect(api.kubeconfigYaml({ token: 'abc' })).toContain('token: abc');
  });

  it('history: every version of one object from the log, the delete included', async () => {
    const created: any = await objects.create(event('ev-history'));
    const first: any = await objects.replace({ ...created, metadata: { ...created.metadata, labels: { step: '1' } } });
    const second: any = await objects.replace({ ...first, metadata: { ...first.metadata, labels: { step: '2' } } });
    const versions = await api.history('events.orch.io/v1', 'default', 'ev-history');
    expect(versions).toHaveLength(3);
    expect(versions.map((v) => v.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED']);
    expect(versions.map((v) => v.resourceVersion)).toEqual([created, first, second].map((o) => o.metadata?.resourceVersion));
    expect(versions.map((v) => v.object.metadata?.labels?.step)).toEqual([undefined, '1', '2']);
    await objects.delete(second);
    const after = await api.history('events', 'default', 'ev-history');
    expect(after.map((v) => v.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    expect(Number(after[3].resourceVersion)).toBeGreaterThan(Number(second.metadata.resourceVersion));
    // Other names for the same resource; a cluster-scoped one needs no namespace.
    expect(await api.history('Event', 'default', 'ev-history')).toEqual(after);
    expect(await api.history('events.events.orch.io', 'default', 'ev-history')).toEqual(after);
    expect((await api.history('namespaces', undefined, 'default')).map((v) => v.type)).toEqual(['ADDED']);
    expect(await api.history('events', 'default', 'never-written')).toEqual([]);
  });

  it('history: names that fit no resource or several are errors that say so', async () => {
    await expect(api.history('rbac.authorization.orch.io/v1', 'default', 'x')).rejects.toThrow(/names several resources \(.*roles\.rbac\.authorization\.orch\.io.*\)/);
    await expect(api.history('widgets', 'default', 'x')).rejects.toThrow(/"widgets": no such resource/);
    await expect(api.history('events', undefined, 'x')).rejects.toThrow(/events are namespaced/);
  });

  it('state: the objects at a version, from the log', async () => {
    const a: any = await objects.create(event('ev-state-a'));
    const b: any = await objects.create(event('ev-state-b'));
    await objects.delete(a);
    const now = api.resourceVersion;
    const events = (all: { kind?: string; metadata: { name?: string } }[]) => names(all.filter((o) => o.kind === 'Event' && o.metadata?.name?.startsWith('ev-state')));
    expect(events(await api.state(a.metadata.resourceVersion))).toEqual(['ev-state-a']);
    expect(events(await api.state(b.metadata.resourceVersion))).toEqual(['ev-state-a', 'ev-state-b']);
    expect(events(await api.state(now))).toEqual(['ev-state-b']);
    expect(events(await api.state())).toEqual(['ev-state-b']);
    // Everything the server wrote at start is there too.
    expect(names((await api.state()).filter((o) => o.kind === 'Namespace'))).toEqual(expect.arrayContaining(['default', 'kube-system']));
    await expect(api.state(Number(now) + 1000)).rejects.toThrow(/newer/);
    await expect(api.state('abc')).rejects.toThrow(/not a version/);
  });

  it('waitForVersion: resolves once the server applied a version, rejects when it never comes', async () => {
    await api.waitForVersion(api.resourceVersion);
    const next = Number(api.resourceVersion) + 1;
    const waiting = api.waitForVersion(next);
    await objects.create(event('ev-wait'));
    await waiting;
    expect(Number(api.resourceVersion)).toBeGreaterThanOrEqual(next);
    await expect(api.waitForVersion(Number(api.resourceVersion) + 5, 50)).rejects.toThrow(/not reached in 50 ms/);
  });
});

describe('reset()', () => {
  let api: Orchd;
  let objects: KubernetesObjectApi;
  beforeAll(async () => {
    api = await startOrchd();
    objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('returns to the state of the start: new objects gone, changed and deleted start objects back', async () => {
    const start = await api.state();
    await objects.create(event('ev-reset-1'));
    await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'reset-ns' } });
    const ns: any = await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await objects.replace({ ...ns, metadata: { ...ns.metadata, labels: { ...ns.metadata.labels, touched: 'yes' } } });
    await objects.delete({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'system:basic-user' } });
    const before = Number(api.resourceVersion);
    await api.reset();
    const after = await api.state();
    // The same objects with the same content; only the versions of the ones put back moved.
    const strip = (o: any) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
    expect(after.map(strip)).toEqual(start.map(strip));
    expect(Number(api.resourceVersion)).toBeGreaterThan(before);
    expect((await get(api, EVENTS)).body.items).toEqual([]);
    expect((await get(api, '/api/v1/namespaces/default')).body.metadata.labels.touched).toBeUndefined();
  });

  it('empties the log: no history of what was removed, older versions compacted (410 Gone)', async () => {
    const created: any = await objects.create(event('ev-reset-2'));
    const rv = created.metadata.resourceVersion;
    expect(await api.history('events', 'default', 'ev-reset-2')).toHaveLength(1);
    await api.reset();
    expect(await api.history('events', 'default', 'ev-reset-2')).toEqual([]);
    const exact = await get(api, `${EVENTS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);
    expect(exact.body.reason).toBe('Expired');
    const below = await api.state(rv).catch((err: unknown) => err);
    expect(below).toBeInstanceOf(OrchdExpiredError);
    expect(below).toMatchObject({ code: 410, reason: 'Expired', oldestResourceVersion: api.resourceVersion, message: expect.stringMatching(/older than the history kept/) });
    // The compaction horizon is the log's end: no version before the last one is readable.
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect(gauge('orchd_log_last_seq')).toBeGreaterThan(Number(rv));
    expect(gauge('orchd_history_oldest_version')).toBe(gauge('orchd_log_last_seq'));
    expect(gauge('orchd_log_last_seq')).toBe(Number(api.resourceVersion));
    // What is left: one version of each object the start wrote.
    const left = await api.state();
    for (const o of left) expect(await api.history(o.kind!, o.metadata?.namespace, o.metadata!.name!)).toHaveLength(1);
  });

  it('ends open watches; a watch resumed from before gets 410 Gone', async () => {
    const from = api.resourceVersion;
    const res = await fetch(`${api.url}${EVENTS}?watch=1&resourceVersion=${from}`);
    const reader = res.body!.getReader();
    await objects.create(event('ev-watched'));
    let text = '';
    const read = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += Buffer.from(value).toString();
      }
    })();
    await api.waitForVersion(Number(from) + 1);
    await api.reset();
    // The stream ends (no timeout needed: a hang fails the test at its own timeout).
    const seen = await read;
    expect(
      seen
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).type),
    ).toEqual(['ADDED']);
    const resumed = await fetch(`${api.url}${EVENTS}?watch=1&resourceVersion=${from}`);
    const line = JSON.parse((await resumed.text()).split('\n')[0]);
    expect(line.type).toBe('ERROR');
    expect(line.object.code).toBe(410);
  });

  it('a client-node informer relists after a reset and follows the new state', async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    const informer = makeInformer(
      api.kubeConfig(),
      EVENTS,
      () => custom.listNamespacedCustomObject({ group: 'events.orch.io', version: 'v1', namespace: 'default', plural: 'events' }) as Promise<KubernetesListObject<KubernetesObject>>,
    );
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    const until = async (what: string, ok: () => boolean) => {
      for (const deadline = Date.now() + 15_000; !ok(); await sleep(20)) {
        if (Date.now() > deadline) throw new Error(`informer: ${what} never happened; has ${JSON.stringify(names(informer.list('default')))}, errors ${String(errors)}`);
      }
    };
    await objects.create(event('ev-old'));
    await informer.start();
    try {
      await until('saw ev-old', () => informer.get('ev-old', 'default') !== undefined);
      await api.reset();
      await until('dropped ev-old', () => informer.get('ev-old', 'default') === undefined);
      await objects.create(event('ev-new'));
      await until('saw ev-new', () => informer.get('ev-new', 'default') !== undefined);
      expect(names(informer.list('default'))).toEqual(['ev-new']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

describe('reset() and the writes around it', () => {
  let api: Orchd;
  let objects: KubernetesObjectApi;
  const hook = new WebhookServer();
  beforeAll(async () => {
    api = await startOrchd();
    objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
    await hook.start();
  });
  afterAll(async () => {
    await api?.stop();
    await hook.stop();
  });

  /** A webhook that holds every create of an Event for a second, then lets it through (failurePolicy Ignore). */
  const holdingWebhook = () => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'hold' },
    webhooks: [
      {
        name: 'hold.example.com',
        clientConfig: { url: `${hook.url}/hold`, caBundle: hook.caBundle },
        rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['events'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 1,
        failurePolicy: 'Ignore',
      },
    ],
  });

  it('finishes a write in flight before it, then deletes it with the rest; refuses writes while it runs (503)', async () => {
    hook.on('/hold', () => 'hang');
    await objects.create(holdingWebhook());
    const received = hook.received.length;
    const inFlight = fetch(`${api.url}${EVENTS}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event('ev-in-flight')) });
    for (const deadline = Date.now() + 5000; hook.received.length === received; await sleep(5)) {
      if (Date.now() > deadline) throw new Error('the create never reached the webhook');
    }
    const resetting = api.reset();
    // The reset waits for the create (held by the webhook for its one-second timeout): a write meanwhile is refused.
    const refused = await fetch(`${api.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'during-reset' } }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ reason: 'ServiceUnavailable', message: expect.stringMatching(/resetting/) });
    expect((await inFlight).status).toBe(201);
    await resetting;
    expect((await get(api, EVENTS)).body.items).toEqual([]);
    expect((await get(api, '/api/v1/namespaces/during-reset')).status).toBe(404);
    expect((await get(api, '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations/hold')).status).toBe(404);
    // Open again once it is done.
    expect((await fetch(`${api.url}${EVENTS}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event('ev-after')) })).status).toBe(201);
  });

  it('watchers({ atLeast }): resolves once the informers watch again after a reset; rejects past its timeout', async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    const informer = makeInformer(
      api.kubeConfig(),
      EVENTS,
      () => custom.listNamespacedCustomObject({ group: 'events.orch.io', version: 'v1', namespace: 'default', plural: 'events' }) as Promise<KubernetesListObject<KubernetesObject>>,
    );
    await informer.start();
    try {
      expect(await api.watchers({ atLeast: 1 })).toBe(1);
      await api.reset();
      // The reset ended the watch: none is open until the informer lists and watches again.
      await expect(api.watchers({ atLeast: 2, timeoutMs: 200 })).rejects.toThrow(/of 2 watches open after 200 ms/);
      expect(await api.watchers({ atLeast: 1 })).toBe(1);
      // Watching again from after the reset: what is written now arrives.
      await objects.create(event('ev-watched-again'));
      for (const deadline = Date.now() + 5000; !informer.get('ev-watched-again', 'default'); await sleep(10)) {
        if (Date.now() > deadline) throw new Error('the informer missed the create after the reset');
      }
    } finally {
      await informer.stop();
    }
  });
});

describe('startOrchd({ crds })', () => {
  it('leaves the objects given as they were, so one list serves several starts; takes apiextensions.k8s.io/v1 as upstream files have it', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const before = structuredClone(crd);
    for (let i = 0; i < 2; i++) {
      const o = await startOrchd({ crds: [crd] });
      try {
        expect((await get(o, '/apis/example.com/v1/gadgets')).status).toBe(200);
      } finally {
        await o.stop();
      }
    }
    expect(crd).toEqual(before);
  });
});

describe('kubeConfig() without a client-node it can load', () => {
  it('says which client-node is installed and which orchd needs', async () => {
    // A client-node 2.x as npm installs it today: its exports hide package.json, and its import crashes under Node 20.
    const dir = tempDir('orchd-client-node-');
    const pkg = join(dir, 'node_modules', '@kubernetes', 'client-node');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@kubernetes/client-node', version: '2.0.1', main: 'index.js', exports: { '.': './index.js' } }));
    await writeFile(join(pkg, 'index.js'), "throw new TypeError('createZstdDecompress is not a function');\n");
    const from = pathToFileURL(join(dir, 'test.js')).href;
    expect(() => loadClientNode(from)).toThrow(
      `kubeConfig() needs @kubernetes/client-node 1.x installed beside orchd (npm install @kubernetes/client-node@1); 2.0.1 is installed, under Node ${process.versions.node} (client-node 2.x needs Node ≥ 22.19): createZstdDecompress is not a function`,
    );
    expect(() => loadClientNode(pathToFileURL(join(tempDir('orchd-no-client-node-'), 'test.js')).href)).toThrow(/1\.x installed beside orchd .*; it is not installed, under Node/);
    // The one installed here loads.
    expect(loadClientNode().KubeConfig).toBe(KubeConfig);
  });
});

describe('history() writers, state() filters, settled()', () => {
  let api: Orchd;
  let objects: KubernetesObjectApi;
  beforeAll(async () => {
    api = await startOrchd({ now: () => Date.parse('2026-03-04T05:06:07Z') });
    objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('history entries carry the user, verb, field manager and commit time of each version', async () => {
    const before = Date.now();
    const created: any = await objects.create(event('ev-writers'), undefined, undefined, 'creator');
    await objects.patch({ ...created, metadata: { name: 'ev-writers', namespace: 'default', labels: { a: 'b' } } }, undefined, undefined, 'labeller', undefined, 'application/merge-patch+json' as any);
    await objects.delete(created);
    const versions = await api.history('events', 'default', 'ev-writers');
    expect(versions.map((v) => [v.type, v.verb, v.fieldManager])).toEqual([
      ['ADDED', 'create', 'creator'],
      ['MODIFIED', 'patch', 'labeller'],
      // A delete names no field manager: its User-Agent stands in, as for any request without one.
      ['DELETED', 'delete', expect.stringMatching(/^node-fetch/)],
    ]);
    for (const v of versions) {
      expect(v.user).toBe('system:anonymous');
      // The log's commit time, not the server's injected clock that stamps the objects.
      expect(Date.parse(v.committedAt!)).toBeGreaterThanOrEqual(before - 5);
      expect(Date.parse(v.committedAt!)).toBeLessThanOrEqual(Date.now() + 5);
    }
  });

  it('state({ resource, namespace, at }): the objects of one kind and namespace', async () => {
    await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await objects.create(event('ev-a'));
    const at = api.resourceVersion;
    await objects.create({ ...event('ev-b'), metadata: { name: 'ev-b', namespace: 'other' }, regarding: { kind: 'Namespace', namespace: 'other', name: 'other' } });
    await objects.create(event('ev-c'));
    expect(names(await api.state({ resource: 'Event', namespace: 'default' }))).toEqual(['ev-a', 'ev-c']);
    expect(names(await api.state({ resource: 'events.orch.io/v1' }))).toEqual(['ev-a', 'ev-c', 'ev-b']);
    expect(names(await api.state({ namespace: 'other' }))).toEqual(['ev-b']);
    expect(names(await api.state({ resource: 'events', at }))).toEqual(['ev-a']);
    expect(names(await api.state({ resource: 'namespaces', namespace: 'other' }))).toContain('other');
    await expect(api.state({ resource: 'nothings' })).rejects.toThrow(/no such resource/);
  });

  it('settled({ quietMs }): resolves only once writes pause that long', async () => {
    const busy = (prefix: string, count: number) =>
      (async () => {
        for (let i = 0; i < count; i++) {
          await objects.create(event(`${prefix}-${i}`));
          await sleep(20);
        }
      })();
    const first = await objects.create(event('ev-busy-first'));
    const writes = busy('ev-busy', 8);
    // Writes come every few tens of ms: a 500 ms pause never comes while they go on.
    await expect(api.settled({ quietMs: 500, timeoutMs: 100 })).rejects.toThrow(/did not pause for 500 ms within 100 ms/);
    const rv = await api.settled({ quietMs: 500 });
    await writes;
    // The pause came after the last of them: the version it answers holds every one.
    expect(Number(rv)).toBeGreaterThan(Number(first.metadata?.resourceVersion) + 7);
    expect(names(await api.state({ at: rv, resource: 'events', namespace: 'default' }))).toContain('ev-busy-7');
  });
});

describe('watchers({ atLeast }) counts open connections', () => {
  let api: Orchd;
  beforeAll(async () => {
    api = await startOrchd();
  });
  afterAll(async () => {
    await api?.stop();
  });
  const informerOn = () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    return makeInformer(
      api.kubeConfig(),
      EVENTS,
      () => custom.listNamespacedCustomObject({ group: 'events.orch.io', version: 'v1', namespace: 'default', plural: 'events' }) as Promise<KubernetesListObject<KubernetesObject>>,
    );
  };

  it('right after an informer stop(), its watch no longer counts', async () => {
    for (let round = 0; round < 5; round++) {
      const informer = informerOn();
      await informer.start();
      expect(await api.watchers({ atLeast: 1 })).toBe(1);
      await informer.stop();
      await expect(api.watchers({ atLeast: 1, timeoutMs: 300 })).rejects.toThrow(/0 of 1 watches open after 300 ms/);
    }
  });

  it('concurrent calls each resolve when their own count is reached', async () => {
    await api.reset(); // no watch left from the test before, even one still closing
    const [a, b] = [informerOn(), informerOn()];
    const one = api.watchers({ atLeast: 1, timeoutMs: 5000 });
    const two = api.watchers({ atLeast: 2, timeoutMs: 5000 });
    const twoAgain = api.watchers({ atLeast: 2, timeoutMs: 5000 });
    try {
      await a.start();
      expect(await one).toBeGreaterThanOrEqual(1);
      await b.start();
      expect(await Promise.all([two, twoAgain])).toEqual([2, 2]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe('startOrchd options', () => {
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('orchd-embed-');
  });

  it('{ dataDir }: a LevelDB log that a later start finds, history and all; a reset returns to what that start found, durably', async () => {
    const dataDir = join(dir, 'data');
    const first = await startOrchd({ dataDir });
    const objects = KubernetesObjectApi.makeApiClient(first.kubeConfig());
    const created: any = await objects.create(event('ev-kept'));
    await objects.replace({ ...created, metadata: { ...created.metadata, labels: { again: 'yes' } } });
    await first.stop();
    const second = await startOrchd({ dataDir });
    try {
      expect((await second.history('events', 'default', 'ev-kept')).map((v) => v.type)).toEqual(['ADDED', 'MODIFIED']);
      await KubernetesObjectApi.makeApiClient(second.kubeConfig()).create(event('ev-later'));
      await second.reset();
    } finally {
      await second.stop();
    }
    // What the second start found stays (its history compacted to its one current version); what was written after it is gone.
    const third = await startOrchd({ dataDir });
    try {
      expect(names((await get(third, EVENTS)).body.items)).toEqual(['ev-kept']);
      expect((await third.history('events', 'default', 'ev-kept')).map((v) => v.object.metadata?.labels)).toEqual([{ again: 'yes' }]);
      expect(await third.history('events', 'default', 'ev-later')).toEqual([]);
    } finally {
      await third.stop();
    }
  });

  it('memory storage starts empty every time, even on the same data folder', async () => {
    const dataDir = join(dir, 'memory');
    const first = await startOrchd({ storage: 'memory', dataDir });
    await KubernetesObjectApi.makeApiClient(first.kubeConfig()).create(event('ev-gone'));
    await first.stop();
    const second = await startOrchd({ storage: 'memory', dataDir });
    try {
      expect((await get(second, EVENTS)).body.items).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it('after stop(), reset() says it is stopped and stop() again is the same stop', async () => {
    const api = await startOrchd();
    const stopping = api.stop();
    expect(api.stop()).toBe(stopping);
    await stopping;
    await expect(api.reset()).rejects.toThrow('orchd is stopped');
    await expect(fetch(`${api.url}/readyz`)).rejects.toThrow();
  });

  it('the clock dates what the server writes', async () => {
    const at = Date.parse('2030-05-06T07:08:09Z');
    const api = await startOrchd({ now: () => at });
    try {
      const created: any = await KubernetesObjectApi.makeApiClient(api.kubeConfig()).create(event('ev-clock'));
      expect(new Date(created.metadata.creationTimestamp).toISOString()).toBe('2030-05-06T07:08:09.000Z');
    } finally {
      await api.stop();
    }
  });

  it('a configuration file given as an object is loaded and enforced (RBAC: anonymous may not list Events)', async () => {
    const api = await startOrchd({ config: { authorization: { apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'RBAC', name: 'rbac' }] } } });
    try {
      expect((await get(api, EVENTS)).status).toBe(403);
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    } finally {
      await api.stop();
    }
  });

  it('a configuration object that breaks a rule stops the start with its field path', async () => {
    await expect(startOrchd({ config: { authorization: { apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers: [] } } })).rejects.toThrow(
      /authorization\.json: authorizers: Required value/,
    );
  });

  it('HTTPS with a given certificate: the KubeConfig trusts it, and client-node verifies the server with it', async () => {
    const pair = generateSelfSigned('127.0.0.1');
    const tlsCertFile = join(dir, 'serving.crt');
    const tlsPrivateKeyFile = join(dir, 'serving.key');
    await writeFile(tlsCertFile, pair.cert);
    await writeFile(tlsPrivateKeyFile, pair.key);
    const api = await startOrchd({ config: { tlsCertFile, tlsPrivateKeyFile } });
    try {
      expect(api.url).toBe(`https://127.0.0.1:${api.port}`);
      const kc = api.kubeConfig();
      expect(kc.getCurrentCluster()?.skipTLSVerify).toBeFalsy();
      const list = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(names(list.items)).toContain('default');
      expect(api.kubeconfigYaml()).toContain(`certificate-authority-data: ${Buffer.from(pair.cert).toString('base64')}`);
    } finally {
      await api.stop();
    }
  });

  it('a data folder is needed for LevelDB, and for a self-signed certificate with memory storage', async () => {
    await expect(startOrchd({ host: '0.0.0.0' })).rejects.toThrow(/HTTPS without a serving certificate needs a data folder/);
    await expect(startOrchd({ storage: 'leveldb' })).rejects.toThrow('the LevelDB log needs a data folder');
  });
});
