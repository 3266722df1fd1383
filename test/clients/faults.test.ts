/**
 * Faults through the real clients: client-node informers on a custom kind converge to the server's
 * state under watch drops, resets and 410 expiries every few events (and the test checks that each
 * kind was injected, so switching one off fails it); kubectl prints an injected 409 as it prints
 * kube-apiserver's; python3-kubernetes' watch sees the 410 and its relist works.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CustomObjectsApi, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOrchd, type Orchd } from '../../src/index.js';
import { crdOf } from '../helpers/crd.js';
import { kubectlHome } from '../helpers/kubectl.js';
import { eventually, sleep } from '../helpers/poll.js';

const GROUP = 'demo.example.com';
const widgets = { group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets' };
const widget = (name: string, size: number) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { size } });

let api: Orchd;
beforeAll(async () => {
  api = await startOrchd({ crds: [crdOf(GROUP, 'widgets', 'Widget')] });
});
afterAll(() => api?.stop());
beforeEach(async () => {
  api.faults.clear();
  await api.reset();
});

describe('client-node informers under watch faults', () => {
  it("converge to the server's state through drops, resets and 410 expiries every few events", async () => {
    api.faults.set({
      seed: 3,
      rules: [
        { name: 'expire', match: { verbs: ['watch'], resources: ['widgets'] }, every: 3, after: { events: 3 }, inject: { watch: 'expire' } },
        { name: 'drop', match: { verbs: ['watch'], resources: ['widgets'] }, every: 2, after: { events: 2 }, inject: { watch: 'drop' } },
        { name: 'reset', match: { verbs: ['watch'], resources: ['widgets'] }, after: { events: 4 }, inject: { watch: 'reset' } },
      ],
    });
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    const informer = makeInformer<KubernetesObject & { spec?: { size: number } }>(
      api.kubeConfig(),
      `/apis/${GROUP}/v1/namespaces/default/widgets`,
      () => custom.listNamespacedCustomObject(widgets) as Promise<KubernetesListObject<KubernetesObject>>,
    );
    let stopped = false;
    // A cut connection is an error to client-node 1.4.0's informer, which then stops: start it again, as controllers do.
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void informer.start().catch(() => undefined), 20);
    });
    await informer.start();
    try {
      // Creates, updates and deletes, a few at a time, so each watch sees a few events before its fault.
      for (let i = 0; i < 24; i++) {
        await custom.createNamespacedCustomObject({ ...widgets, body: widget(`w${i}`, 1) });
        if (i % 3 === 2) await custom.patchNamespacedCustomObject({ ...widgets, name: `w${i - 1}`, body: [{ op: 'replace', path: '/spec/size', value: 2 }] });
        if (i % 4 === 3) await custom.deleteNamespacedCustomObject({ ...widgets, name: `w${i - 3}` });
        await sleep(15);
      }
      const server = async () =>
        ((await custom.listNamespacedCustomObject(widgets)) as KubernetesListObject<KubernetesObject>).items.map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`).sort();
      const cache = () =>
        informer
          .list('default')
          .map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`)
          .sort();
      const want = await server();
      await eventually(() => JSON.stringify(cache()) === JSON.stringify(want) || undefined, { timeoutMs: 20_000 });
      expect(cache()).toEqual(want);
      const kinds = new Set(api.faults.injected().map((f) => f.fault));
      expect([...kinds].sort()).toEqual(['watch:drop', 'watch:expire', 'watch:reset']);
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});

describe('kubectl', () => {
  it("prints an injected 409 as it prints kube-apiserver's", async () => {
    const k = await kubectlHome(api.url);
    try {
      const created = await k.kubectl(['create', '-f', '-'], JSON.stringify(widget('k1', 1)));
      expect(created.stderr).toBe('');
      api.faults.set({ seed: 1, rules: [{ match: { verbs: ['patch'], userAgents: ['kubectl'] }, inject: { status: 409 } }] });
      const labelled = await k.kubectl(['label', 'widgets.demo.example.com', 'k1', 'tier=x']);
      expect(labelled.code).toBe(1);
      expect(labelled.stderr.trim()).toBe(
        'Error from server (Conflict): Operation cannot be fulfilled on widgets.demo.example.com "k1": the object has been modified; please apply your changes to the latest version and try again',
      );
    } finally {
      await k.remove();
    }
  });
});

describe('python3-kubernetes', () => {
  it('its watch sees the injected 410, and the relist works', async () => {
    api.faults.set({ seed: 1, rules: [{ match: { verbs: ['watch'] }, first: 1, after: { events: 1 }, inject: { watch: 'expire' } }] });
    const before = api.faults.injected().length;
    const script = fileURLToPath(new URL('./python/watch_expire.py', import.meta.url));
    const { stdout } = await promisify(execFile)('/usr/bin/python3', [script, api.url, GROUP], { timeout: 60_000 });
    const out = JSON.parse(stdout);
    expect(out.seen).toEqual([['ADDED', 'py-1']]);
    expect(out.error.status).toBe(410);
    expect(out.error.reason).toMatch(/^Expired: too old resource version: \d+ \(\d+\)$/);
    expect(out.relisted).toEqual(['py-1']);
    expect(out.after).toEqual([['ADDED', 'py-2']]);
    expect(
      api.faults
        .injected()
        .slice(before)
        .map((f) => f.fault),
    ).toEqual(['watch:expire']);
  });
});
