/**
 * The example controller's own tests: one orchd for the whole file, started in this process, and
 * reset() between tests instead of a new server per test.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { startOrchd, type Orchd } from 'orchd';
import { REASON_LABEL, SUMMARY_ANNOTATION, reasonLabel, startEventReasons, type Controller } from './controller.js';

let api: Orchd;
let objects: KubernetesObjectApi;
let controller: Controller;

beforeAll(async () => {
  api = await startOrchd({ storage: 'memory' });
  objects = KubernetesObjectApi.makeApiClient(api.kubeConfig());
});
afterAll(() => api.stop());
beforeEach(async () => {
  controller = startEventReasons(api.kubeConfig());
  await controller.synced;
});
afterEach(async () => {
  await controller.stop();
  await api.reset();
});

const event = (name: string, reason: string, namespace = 'default'): KubernetesObject & Record<string, unknown> => ({
  apiVersion: 'events.orch.io/v1',
  kind: 'Event',
  metadata: { name, namespace },
  eventTime: '2026-01-02T03:04:05.000000Z',
  reportingController: 'example.com/kubelet',
  reportingInstance: 'node-1',
  action: 'Pulling',
  reason,
  type: 'Normal',
});

/** Polls until check passes (the controller works asynchronously), at most 10 s. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const summaryOf = async (namespace: string) => {
  const ns = await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return ns.metadata?.annotations?.[SUMMARY_ANNOTATION];
};

describe('event-reasons controller', () => {
  it('labels each Event with its reason', async () => {
    await objects.create(event('pull-1', 'Pulled'));
    const labelled = await eventually(
      () => objects.read({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'pull-1', namespace: 'default' } }),
      (e) => e.metadata?.labels?.[REASON_LABEL] !== undefined,
    );
    expect(labelled.metadata?.labels?.[REASON_LABEL]).toBe('Pulled');
    // The label went through the log as one more version of the Event: created, then labelled.
    const versions = await api.history('events', 'default', 'pull-1');
    expect(versions.map((v) => [v.type, v.object.metadata?.labels?.[REASON_LABEL]])).toEqual([
      ['ADDED', undefined],
      ['MODIFIED', 'Pulled'],
    ]);
  });

  it('keeps a count of Events by reason on the Namespace, through creates and deletes', async () => {
    await objects.create(event('a', 'BackOff'));
    await objects.create(event('b', 'BackOff'));
    await objects.create(event('c', 'Started'));
    expect(
      await eventually(
        () => summaryOf('default'),
        (s) => s === '{"BackOff":2,"Started":1}',
      ),
    ).toBe('{"BackOff":2,"Started":1}');
    await objects.delete({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'a', namespace: 'default' } });
    expect(
      await eventually(
        () => summaryOf('default'),
        (s) => s === '{"BackOff":1,"Started":1}',
      ),
    ).toBe('{"BackOff":1,"Started":1}');
  });

  it('starts from a clean server: what the tests before wrote is gone', async () => {
    expect((await objects.list('events.orch.io/v1', 'Event')).items).toEqual([]);
    expect(await summaryOf('default')).toBeUndefined();
  });

  it('makes any reason a valid label value', () => {
    expect(reasonLabel('Failed Scheduling!')).toBe('Failed_Scheduling');
    expect(reasonLabel('x'.repeat(80))).toHaveLength(63);
    expect(reasonLabel(undefined)).toBe('none');
  });
});
