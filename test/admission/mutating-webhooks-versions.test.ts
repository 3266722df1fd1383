/**
 * Mutating webhooks on an API server built here over a real store, for what the usual test server
 * cannot show. matchPolicy on a kind served in two versions: orchd's multi-version kinds are
 * admissionregistration kinds, which webhooks never see, so Event is served in v1 and v2 (same
 * shape); a webhook whose rule names only v2 is called for a v1 request under Equivalent (it sees
 * the v2 object, its patch lands on the v1 object) and not under Exact. And the server's log line
 * for a webhook call that failed open.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Logger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { createApiServer, type ApiServer } from '../../src/http/server.js';
import { buildRegistry } from '../../src/registry/build.js';
import { startControllers } from '../../src/controllers/start.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { event } from '../../src/resources/event.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KindStrategy } from '../../src/api/strategy.js';
import { Store } from '../../src/store/store.js';
import { call } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { addLabel, WebhookServer } from './webhook-server.js';
import { typeCheckPolicy } from '../../src/admission/index.js';

const MWC = '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations';
const twoVersions: KindStrategy = { ...event, versions: ['v1', 'v2'] };
let log: MemoryLog;
let store: Store;
let api: ApiServer;
let base: string;
let hook: WebhookServer;
let stops: (() => void)[] = [];
const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = { info() {}, warn: (msg, fields) => warnings.push({ msg, ...(fields ? { fields } : {}) }), error() {} };

beforeAll(async () => {
  hook = await new WebhookServer().start();
  hook.on('/label', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'seen-as', r.request.object.apiVersion.replace('/', '_')) }));
  log = new MemoryLog();
  await log.open();
  store = new Store({ log });
  const served = kinds.map((k) => (k === event ? twoVersions : k));
  api = createApiServer({ objects: buildRegistry(store, served, { logger, secret: randomBytes(32) }), kinds: served, metrics: new Metrics(), logger });
  await new Promise<void>((resolve) => api.http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(api.http.address() as AddressInfo).port}`;
  await store.start();
  stops = await startControllers(api.context.objects, api.context.kinds, { logger, typeCheckPolicy, eventTtlSeconds: 3600 });
  await api.start();
});
afterAll(async () => {
  for (const stop of stops.reverse()) stop();
  await api?.close();
  await store?.close();
  await log?.close();
  await hook?.stop();
});

test('a rule naming another served version matches under Equivalent (the webhook sees that version) and not under Exact', async () => {
  for (const matchPolicy of ['Equivalent', 'Exact']) {
    const name = `v2-only-${matchPolicy.toLowerCase()}`;
    const webhook = {
      name: 'v2.example.com',
      clientConfig: { url: `${hook.url}/label`, caBundle: hook.caBundle },
      rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v2'], resources: ['events'], operations: ['CREATE'] }],
      matchPolicy,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    };
    expect((await call(base, 'POST', MWC, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: [webhook] })).status).toBe(201);
    const before = hook.received.length;
    const e = fixtures.event();
    e.metadata = { name };
    const r = await call(base, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', e);
    expect(r.status, r.text).toBe(201);
    if (matchPolicy === 'Exact') {
      expect(hook.received.length).toBe(before);
      expect(r.body.metadata.labels).toBeUndefined();
      continue;
    }
    expect(hook.received.length).toBe(before + 1);
    const req = hook.reviews('/label').at(-1).request;
    expect(req).toMatchObject({
      kind: { group: 'events.orch.io', version: 'v2', kind: 'Event' },
      resource: { group: 'events.orch.io', version: 'v2', resource: 'events' },
      requestKind: { group: 'events.orch.io', version: 'v1', kind: 'Event' },
      requestResource: { group: 'events.orch.io', version: 'v1', resource: 'events' },
      object: { apiVersion: 'events.orch.io/v2' },
    });
    expect(r.body.apiVersion).toBe('events.orch.io/v1');
    expect(r.body.metadata.labels).toEqual({ 'seen-as': 'events.orch.io_v2' });
    expect((await call(base, 'DELETE', `${MWC}/${name}`)).status).toBe(200);
  }
});

test('a call that fails under failurePolicy Ignore is logged, naming the webhook and why', async () => {
  hook.on('/500', () => ({ status: 500, body: 'boom', contentType: 'text/plain' }));
  const webhook = {
    name: 'flaky.example.com',
    clientConfig: { url: `${hook.url}/500`, caBundle: hook.caBundle },
    rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['*'], resources: ['events'], operations: ['CREATE'] }],
    failurePolicy: 'Ignore',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
  };
  expect((await call(base, 'POST', MWC, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'flaky' }, webhooks: [webhook] })).status).toBe(201);
  const e = fixtures.event();
  e.metadata = { name: 'failed-open' };
  expect((await call(base, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', e)).status).toBe(201);
  expect(warnings).toContainEqual({
    msg: 'failed calling webhook, failing open',
    fields: { webhook: 'flaky.example.com', error: 'failed calling webhook "flaky.example.com": failed to call webhook: an error on the server ("boom") has prevented the request from succeeding' },
  });
});
