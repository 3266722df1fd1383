/**
 * Reinvocation across plugins: the webhook plugin after another mutating plugin in the chain (as
 * MutatingAdmissionPolicy runs before it), over a real store and a real HTTPS webhook. When the
 * earlier plugin changes the object in the reinvocation round, an IfNeeded webhook that already
 * ran sees the change and runs again; a Never webhook does not; and when nothing changed, no
 * webhook runs twice.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { admissionAttributes } from '../../src/admission/attributes.js';
import { MutatingWebhooks } from '../../src/admission/mutating-webhooks.js';
import { runMutatingPlugins, type MutatingPlugin } from '../../src/admission/mutation.js';
import { Registry } from '../../src/registry/registry.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { event } from '../../src/resources/event.js';
import { mutatingWebhookConfiguration } from '../../src/resources/mutating-webhook-configuration.js';
import { namespace } from '../../src/resources/namespace.js';
import type { KubeObject } from '../../src/api/types.js';
import { Store } from '../../src/store/store.js';
import { fixtures } from '../resources/fixtures.js';
import { addLabel, WebhookServer } from './webhook-server.js';

let log: MemoryLog;
let store: Store;
let objects: Registry;
let hook: WebhookServer;
const user = { username: 'tester', uid: '', groups: ['system:authenticated'], extra: {} };

beforeAll(async () => {
  hook = await new WebhookServer().start();
  // Counts the labels it sees, so each call's view of the object is on record.
  hook.on('/count', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'seen-labels', String(Object.keys(r.request.object.metadata.labels ?? {}).length)) }));
  log = new MemoryLog();
  await log.open();
  store = new Store({ log });
  await store.start();
  objects = new Registry(store, { now: () => new Date() });
});
afterAll(async () => {
  await store?.close();
  await log?.close();
  await hook?.stop();
});

/** A plugin before the webhooks that adds a label in the reinvocation round only (when asked to). */
const laterChange = (enabled: boolean): MutatingPlugin => ({
  begin: () => ({
    run: async (_a, o, reinvocation) => (enabled && reinvocation ? { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, late: 'yes' } } } : o),
  }),
});

test.each([
  { name: 'IfNeeded, changed by an earlier plugin in the reinvocation round: runs again', policy: 'IfNeeded', change: true, calls: 2 },
  { name: 'Never: runs once', policy: 'Never', change: true, calls: 1 },
  { name: 'IfNeeded, nothing changed: runs once', policy: 'IfNeeded', change: false, calls: 1 },
])('$name', async ({ policy, change, calls }) => {
  const name = `cfg-${policy.toLowerCase()}-${change}`;
  const cfg = {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name },
    webhooks: [
      {
        name: 'count.example.com',
        clientConfig: { url: `${hook.url}/count`, caBundle: hook.caBundle },
        rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] }],
        reinvocationPolicy: policy,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
  await objects.create(mutatingWebhookConfiguration, undefined, cfg as KubeObject, { dryRun: false });
  try {
    const webhooks = new MutatingWebhooks(store, mutatingWebhookConfiguration);
    const e = fixtures.event() as KubeObject;
    e.metadata = { name: 'x', namespace: 'default' };
    const attrs = admissionAttributes(store, namespace, 'CREATE', event, e, undefined, user, { dryRun: false });
    const before = hook.received.length;
    const out = await runMutatingPlugins([laterChange(change), webhooks], 'CREATE', event, () => attrs, e);
    expect(hook.received.length - before).toBe(calls);
    // the second call saw the earlier plugin's label (and its own from the first call)
    expect(out.metadata.labels).toEqual(calls === 2 ? { late: 'yes', 'seen-labels': '2' } : { ...(change ? { late: 'yes' } : {}), 'seen-labels': '0' });
  } finally {
    await objects.delete(mutatingWebhookConfiguration, undefined, name, { dryRun: false });
  }
});
