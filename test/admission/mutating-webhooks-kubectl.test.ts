/**
 * kubectl against a real orchd with a mutating webhook: `kubectl apply` of a configuration, then
 * `kubectl create` of a namespace that the webhook labels (the label shows in kubectl's own get),
 * the webhook's warning printed by kubectl, and a denial printed as kubectl prints server errors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { kubectlForFile } from '../helpers/kubectl.js';
import { addLabel, WebhookServer } from './webhook-server.js';

const { kubectl } = kubectlForFile();
let hook: WebhookServer;

beforeAll(async () => {
  hook = await new WebhookServer().start();
  hook.on('/mutate', (r) => {
    if (r.request.name === 'forbidden-team') return hook.deny(r, { code: 403, reason: 'Forbidden', message: 'that name is taken' });
    return hook.allow(r, { patch: addLabel(r.request.object, 'owner', 'webhook'), warnings: ['owner label added by the webhook'] });
  });
});
afterAll(async () => {
  await hook?.stop();
});

describe('kubectl with a mutating webhook', () => {
  test('kubectl create: the webhook’s label is on the object, its warning printed; a denial is printed', async () => {
    const config = `apiVersion: admissionregistration.orch.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: owner-label
webhooks:
- name: owner.example.com
  clientConfig:
    url: ${hook.url}/mutate
    caBundle: ${hook.caBundle}
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["namespaces"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;
    const applied = await kubectl(['apply', '-f', '-'], config);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('mutatingwebhookconfiguration.admissionregistration.orch.io/owner-label created');

    // From a manifest (`kubectl create namespace NAME` sends protobuf: test/clients/kubectl-protobuf.test.ts covers it).
    const ns = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
    const created = await kubectl(['create', '-f', '-'], ns('team-blue'));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('namespace/team-blue created');
    expect(created.stderr).toContain('Warning: owner label added by the webhook');
    const label = await kubectl(['get', 'namespace', 'team-blue', '-o', 'jsonpath={.metadata.labels.owner}']);
    expect(label.stdout).toBe('webhook');
    expect(hook.reviews('/mutate').at(-1).request).toMatchObject({ operation: 'CREATE', name: 'team-blue', kind: { group: '', version: 'v1', kind: 'Namespace' } });

    const denied = await kubectl(['create', '-f', '-'], ns('forbidden-team'));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('Error from server (Forbidden): error when creating "STDIN": admission webhook "owner.example.com" denied the request: that name is taken');
  });
});
