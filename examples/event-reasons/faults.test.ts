/**
 * The example controller under the faults of production, injected by orchd from a seed, the same
 * way every run: its patches meet conflicts (409) and lost answers (committed, then the connection
 * cut), its informer's watches expire (410) and drop. It must converge all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { startOrchd, type Orchd } from 'orchd';
import { REASON_LABEL, SUMMARY_ANNOTATION, startEventReasons } from './controller.js';

let api: Orchd;
let objects: KubernetesObjectApi;

beforeAll(async () => {
  api = await startOrchd({
    storage: 'memory',
    faults: {
      seed: 7,
      rules: [
        { name: 'conflicts', match: { verbs: ['patch'], fieldManagers: ['event-reasons'] }, probability: 0.3, inject: { status: 409 } },
        { name: 'lost answers', match: { verbs: ['patch'], fieldManagers: ['event-reasons'] }, every: 4, inject: { commitThenDrop: true } },
        { name: 'expiries', match: { verbs: ['watch'], resources: ['events'] }, every: 2, after: { events: 3 }, inject: { watch: 'expire' } },
        { name: 'drops', match: { verbs: ['watch'], resources: ['events'] }, after: { events: 4 }, inject: { watch: 'drop' } },
      ],
    },
  });
  objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
});
afterAll(() => api.stop());

const event = (name: string, reason: string): KubernetesObject & Record<string, unknown> => ({
  apiVersion: 'events.orch.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2026-01-02T03:04:05.000000Z',
  reportingController: 'example.com/kubelet',
  reportingInstance: 'node-1',
  action: 'Pulling',
  reason,
  type: 'Normal',
});

/** Polls until check passes, at most 20 s (the faults slow the controller down). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('event-reasons controller under faults', () => {
  it('labels every Event and keeps the summary right through conflicts, lost answers, expiries and drops', async () => {
    const controller = startEventReasons(api.kubeConfig());
    try {
      await controller.synced;
      const reasons = ['BackOff', 'Started', 'Pulled'];
      for (let i = 0; i < 12; i++) await objects.create(event(`ev-${i}`, reasons[i % 3]));
      const labels = await eventually(
        async () => (await objects.list('events.orch.io/v1', 'Event', 'default')).items.map((e) => e.metadata?.labels?.[REASON_LABEL] ?? '-'),
        (l) => l.every((v) => v !== '-'),
      );
      expect(labels.sort()).toEqual([...Array(4).fill('BackOff'), ...Array(4).fill('Pulled'), ...Array(4).fill('Started')]);
      const summary = await eventually(
        async () => (await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } })).metadata?.annotations?.[SUMMARY_ANNOTATION],
        (s) => s === '{"BackOff":4,"Pulled":4,"Started":4}',
      );
      expect(summary).toBe('{"BackOff":4,"Pulled":4,"Started":4}');
      // Each fault met the controller at least once: the test is not passing on a healthy server.
      expect(new Set(api.faults.injected().map((f) => f.rule))).toEqual(new Set(['conflicts', 'lost answers', 'expiries', 'drops']));
    } finally {
      await controller.stop();
    }
  });
});
