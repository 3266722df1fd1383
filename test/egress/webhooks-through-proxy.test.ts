/**
 * Egress selection on a real orchd: with the controlplane selection dialed through an HTTP CONNECT
 * proxy, both kinds of outbound webhook call (the authorizer's SubjectAccessReview and a mutating
 * admission webhook's AdmissionReview, which Kubernetes dials as controlplane traffic for URL
 * webhooks) go through the proxy's tunnels; the destination's own TLS (caBundle) still holds inside.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { loadServerConfig } from '../../src/config/server-config.js';
import { addLabel, WebhookServer } from '../admission/webhook-server.js';
import { SarWebhook, webhookEntry } from '../auth/sar-webhook.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { ConnectProxy } from './connect-proxy.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
let proxy: ConnectProxy;
let admissionHook: WebhookServer;
let sar: SarWebhook;
let srv: TestServer;

beforeAll(async () => {
  dir = tempDir('orchd-egress-webhooks-');
  [proxy, admissionHook, sar] = await Promise.all([new ConnectProxy({ tcp: true }).start(), new WebhookServer().start(), new SarWebhook().start()]);
  admissionHook.on('/label', (r) => admissionHook.allow(r, { patch: addLabel(r.request.object, 'via', 'proxy') }));
  const egressFile = join(dir, 'egress.yaml');
  await writeFile(
    egressFile,
    stringify({
      apiVersion: 'apiserver.orch.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [{ name: 'controlplane', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: proxy.address } } } }],
    }),
  );
  // The webhook has no opinion on anonymous requests; AlwaysAllow then lets them through.
  const authzFile = join(dir, 'authz.yaml');
  await writeFile(
    authzFile,
    stringify({
      apiVersion: 'apiserver.config.orch.io/v1',
      kind: 'AuthorizationConfiguration',
      authorizers: [webhookEntry('sar', await sar.kubeconfig(dir)), { type: 'AlwaysAllow', name: 'everyone' }],
    }),
  );
  const loaded = loadServerConfig({ egressSelector: egressFile, authorization: authzFile });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  srv = await startServer({ config: loaded.config });
});
afterAll(async () => {
  await srv?.stop();
  await Promise.all([proxy?.stop(), admissionHook?.stop(), sar?.stop()]);
});

test('authorizer and admission webhook calls go through the CONNECT proxy', async () => {
  const config = {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'through-proxy' },
    webhooks: [
      {
        name: 'label.example.com',
        clientConfig: { url: `${admissionHook.url}/label`, caBundle: admissionHook.caBundle },
        rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
  expect((await call(srv.url, 'POST', '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations', config)).status).toBe(201);
  const e = fixtures.event();
  e.metadata = { name: 'proxied' };
  const r = await call(srv.url, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', e);
  expect(r.status, r.text).toBe(201);
  expect(r.body.metadata.labels).toEqual({ via: 'proxy' });
  expect(admissionHook.received).toHaveLength(1);
  expect(sar.hits).toBeGreaterThan(0);
  const hostOf = (url: string) => new URL(url).host;
  expect(new Set(proxy.tunnels)).toEqual(new Set([hostOf(admissionHook.url), hostOf(sar.url)]));
});
