/**
 * kubectl against a real orchd with a mutating webhook: `kubectl apply` of a configuration, then
 * `kubectl create` of a namespace that the webhook labels (the label shows in kubectl's own get),
 * the webhook's warning printed by kubectl, and a denial printed as kubectl prints server errors.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addLabel, WebhookServer } from './webhook-server.js';

const KUBECTL = (process.env.PATH ?? '')
  .split(delimiter)
  .map((d) => join(d, 'kubectl'))
  .find((p) => existsSync(p));
if (!KUBECTL) console.warn('no kubectl on PATH: skipping the kubectl webhook tests');

let srv: TestServer;
let hook: WebhookServer;
let home: string;
let base: string[];

beforeAll(async () => {
  [srv, hook] = await Promise.all([startServer(), new WebhookServer().start()]);
  hook.on('/mutate', (r) => {
    if (r.request.name === 'forbidden-team') return hook.deny(r, { code: 403, reason: 'Forbidden', message: 'that name is taken' });
    return hook.allow(r, { patch: addLabel(r.request.object, 'owner', 'webhook'), warnings: ['owner label added by the webhook'] });
  });
  home = await mkdtemp(join(tmpdir(), 'orchd-kubectl-webhook-'));
  const kubeconfig = join(home, 'kubeconfig');
  await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  base = ['--server', srv.url, '--kubeconfig', kubeconfig, '--cache-dir', join(home, 'cache')];
});
afterAll(async () => {
  await srv?.stop();
  await hook?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const kubectl = (args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = execFile(KUBECTL!, [...base, ...args], { cwd: home, timeout: 30_000, env: { ...process.env, HOME: home } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });

describe.skipIf(!KUBECTL)('kubectl with a mutating webhook', () => {
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

    // From a manifest: `kubectl create namespace` would send protobuf, which orchd does not read.
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
