/**
 * The MutatingAdmissionWebhook plugin's AdmissionConfiguration on a real orchd: the kubeconfig its
 * WebhookAdmissionConfiguration names gives a webhook's host a bearer token and a client
 * certificate, and they arrive at the webhook (which asks for and verifies client certificates); a
 * webhook on another host gets neither. A configuration that breaks a rule stops the start.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadServerConfig } from '../../src/config/server-config.js';
import { makeCertificate } from '../config/support.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { addLabel, WebhookServer } from './webhook-server.js';
import { tempDir } from '../helpers/temp.js';

const MWC = '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations';
const dir = tempDir('orchd-webhook-config-');
// A self-signed client certificate (CN orchd-test) that the webhooks trust as their client CA.
const pair = makeCertificate(dir);
const client = { caPem: pair.certPem, cert: pair.certPem, key: readFileSync(pair.key, 'utf8') };
let srv: TestServer;
let known: WebhookServer;
let stranger: WebhookServer;

function admissionConfig(kubeConfigFile: string): string {
  const file = join(dir, 'admission.yaml');
  writeFileSync(
    file,
    `apiVersion: apiserver.config.orch.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.orch.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: ${kubeConfigFile}
`,
  );
  return file;
}

beforeAll(async () => {
  [known, stranger] = await Promise.all([new WebhookServer().start({ clientCa: client.caPem }), new WebhookServer().start({ clientCa: client.caPem })]);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kubeconfig = join(dir, 'webhooks.kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
users:
- name: ${new URL(known.url).host}
  user:
    token: hook-token
    client-certificate-data: ${b64(client.cert)}
    client-key-data: ${b64(client.key)}
`,
  );
  const loaded = loadServerConfig({ admission: admissionConfig(kubeconfig) });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  srv = await startServer({ config: loaded.config });
  for (const h of [known, stranger]) h.on('/label', (r) => h.allow(r, { patch: addLabel(r.request.object, 'mutated-by', 'webhook') }));
});
afterAll(async () => {
  await srv?.stop();
  await known?.stop();
  await stranger?.stop();
});

const webhook = (name: string, server: WebhookServer) => ({
  name,
  clientConfig: { url: `${server.url}/label`, caBundle: server.caBundle },
  rules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
});

test('the kubeconfig user named for the webhook’s host:port gives it a bearer token and a client certificate; other hosts get none', async () => {
  const config = {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'credentials' },
    webhooks: [webhook('known.example.com', known), webhook('stranger.example.com', stranger)],
  };
  expect((await call(srv.url, 'POST', MWC, config)).status).toBe(201);
  const e = fixtures.event();
  e.metadata = { name: 'with-credentials' };
  const r = await call(srv.url, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', e);
  expect(r.status, r.text).toBe(201);
  expect(r.body.metadata.labels).toEqual({ 'mutated-by': 'webhook' });
  const [k] = known.received;
  expect(k.headers.authorization).toBe('Bearer hook-token');
  expect(k.clientCN).toBe('orchd-test');
  expect(k.headers['user-agent']).toBe('orchd-admission');
  const [s] = stranger.received;
  expect(s.headers.authorization).toBeUndefined();
  expect(s.clientCN).toBeUndefined();
});

test('a WebhookAdmissionConfiguration that breaks a rule stops the start, naming the file and the field', () => {
  const badKubeconfig = join(dir, 'bad.kubeconfig');
  writeFileSync(badKubeconfig, `users:\n- name: x\n  user:\n    client-certificate-data: ${Buffer.from(client.cert).toString('base64')}\n`);
  const file = admissionConfig(badKubeconfig);
  const loaded = loadServerConfig({ admission: file });
  expect(loaded.ok).toBe(false);
  if (loaded.ok) return;
  expect(loaded.problems.map((p) => [p.file, p.message])).toEqual([
    [
      file,
      `plugins[0].configuration.kubeConfigFile: Invalid value: ${JSON.stringify(badKubeconfig)}: users[0].user.client-key: Required value: client-key-data or client-key must be specified for x to use the clientCert authentication method`,
    ],
  ]);
});
