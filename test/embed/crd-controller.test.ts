/**
 * A controller of a custom resource tested the way its authors would: one startOrchd({ crds }) for
 * the file, an informer-based controller under test, reset() between tests. The CRD installed at
 * start stays served across resets, and nothing one test created is seen by the next.
 */
import { CustomObjectsApi, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOrchd, type Orchd } from '../../src/index.js';
import { eventually } from '../helpers/poll.js';

const GROUP = 'demo.example.com';
const widgets = { group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets' };
const CRD = {
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
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
              spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } },
              status: { type: 'object', properties: { observedSize: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

type Widget = KubernetesObject & { spec: { size: number }; status?: { observedSize?: number } };

/** The controller under test: each widget's status.observedSize follows its spec.size. */
function startWidgetController(api: Orchd): { informer: ReturnType<typeof makeInformer<Widget>>; stop(): Promise<void> } {
  const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
  const informer = makeInformer<Widget>(api.kubeConfig(), `/apis/${GROUP}/v1/namespaces/default/widgets`, () => custom.listNamespacedCustomObject(widgets) as Promise<KubernetesListObject<Widget>>);
  const reconcile = async (w: Widget) => {
    if (w.status?.observedSize === w.spec.size) return;
    await custom.replaceNamespacedCustomObjectStatus({ ...widgets, name: w.metadata!.name!, body: { ...w, status: { observedSize: w.spec.size } } }).catch(() => undefined);
  };
  informer.on('add', (w) => void reconcile(w));
  informer.on('update', (w) => void reconcile(w));
  // The informer relists after a reset's 410 on its own; an error event is its way to say so.
  informer.on('error', () => setTimeout(() => void informer.start(), 50));
  return { informer, stop: () => informer.stop() };
}

describe('a custom resource controller on startOrchd({ crds }) with reset() between tests', () => {
  let api: Orchd;
  let controller: ReturnType<typeof startWidgetController>;
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    api = await startOrchd({ crds: [CRD] });
    custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    controller = startWidgetController(api);
    await controller.informer.start();
  });
  afterEach(() => api.reset());
  afterAll(async () => {
    await controller?.stop();
    await api?.stop();
  });

  const observed = (name: string) => eventually(async () => ((await custom.getNamespacedCustomObject({ ...widgets, name })) as Widget).status?.observedSize, { what: `${name}'s status` });

  it('reconciles a widget created by the test', async () => {
    await custom.createNamespacedCustomObject({ ...widgets, body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'first' }, spec: { size: 3 } } });
    expect(await observed('first')).toBe(3);
  });

  it("after reset() the CRD is still served, the last test's widget is gone, and a new one is reconciled", async () => {
    const listed = (await custom.listNamespacedCustomObject(widgets)) as KubernetesListObject<Widget>;
    expect(listed.items.map((w) => w.metadata?.name)).toEqual([]);
    await custom.createNamespacedCustomObject({ ...widgets, body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'second' }, spec: { size: 5 } } });
    expect(await observed('second')).toBe(5);
    // The informer relisted after the reset: it holds this test's widget only.
    await eventually(
      () =>
        controller.informer
          .list('default')
          .map((w) => w.metadata?.name)
          .join() === 'second',
      { what: 'the informer holding only "second"' },
    );
  });
});
