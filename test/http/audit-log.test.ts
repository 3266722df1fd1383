import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config/server-config.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createNamespace, event } from '../watch/objects.js';
import { tempDir } from '../helpers/temp.js';
import { jsonLines } from '../helpers/json-lines.js';

/*
 * --audit-log-path and --audit-policy-file on a real server: each request the policy selects is one
 * audit.k8s.io Event line in the file (verb, user, objectRef, responseStatus with the refusal,
 * admission's annotations), and a rule at None keeps a request out.
 */

const ADM = '/apis/admissionregistration.orch.io/v1';
let dir: string;
const events = async (file: string) => jsonLines(await readFile(file, 'utf8'));

beforeAll(async () => {
  dir = tempDir('orchd-audit-');
});

async function serverWith(policy: string | undefined, logFile: string): Promise<TestServer> {
  let config;
  if (policy !== undefined) {
    const file = join(dir, `policy-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, policy);
    const loaded = loadServerConfig({ auditPolicy: file });
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
    config = loaded.config;
  }
  return startServer({ auditLogPath: logFile, ...(config ? { config } : {}) });
}

describe('the audit log', () => {
  it('without a policy, every request at Metadata: a refused create with its reason and the policy that refused it', async () => {
    const file = join(dir, 'all.log');
    const s = await serverWith(undefined, file);
    try {
      await call(s.url, 'POST', `${ADM}/validatingadmissionpolicies`, {
        apiVersion: 'admissionregistration.orch.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'guard' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] }] },
          validations: [{ expression: "object.type == 'Normal'", message: 'only Normal' }],
        },
      });
      await call(s.url, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
        apiVersion: 'admissionregistration.orch.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'guard-b' },
        spec: { policyName: 'guard', validationActions: ['Deny', 'Audit'] },
      });
      await createNamespace(s.url, 'au');
      const refused = await call(s.url, 'POST', `${EVENTS}/namespaces/au/events`, { ...event('w1', 'au'), type: 'Warning' }, { 'user-agent': 'audit-test/1' });
      expect(refused.status).toBe(422);
      expect((await call(s.url, 'GET', `${EVENTS}/namespaces/au/events/nope`)).status).toBe(404);
      expect((await call(s.url, 'GET', '/version')).status).toBe(200);
    } finally {
      await s.stop();
    }
    const got = await events(file);
    const create = got.find((e) => e.verb === 'create' && e.objectRef?.resource === 'events');
    expect(create).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      stage: 'ResponseComplete',
      requestURI: `${EVENTS}/namespaces/au/events`,
      user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
      userAgent: 'audit-test/1',
      // Named from the request's object at Metadata level, as kube-apiserver does: `orchd log --audit` names refused creates.
      objectRef: { resource: 'events', namespace: 'au', name: 'w1', apiGroup: 'events.orch.io', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 422, status: 'Failure', reason: 'Invalid' },
    });
    expect(create.objectRef.uid).toBeUndefined();
    // A cluster-scoped create: named by its object, in no namespace.
    expect(got.find((e) => e.verb === 'create' && e.objectRef?.resource === 'namespaces').objectRef).toEqual({ resource: 'namespaces', name: 'au', apiGroup: '', apiVersion: 'v1' });
    expect(create.responseStatus.message).toContain('only Normal');
    expect(JSON.parse(create.annotations['validation.policy.admission.orch.io/validation_failure'])).toMatchObject([{ message: 'only Normal', policy: 'guard', binding: 'guard-b' }]);
    expect(create.auditID).toMatch(/^[0-9a-f-]{36}$/);
    expect(create.sourceIPs).toEqual(['127.0.0.1']);
    expect(Date.parse(create.stageTimestamp)).toBeGreaterThanOrEqual(Date.parse(create.requestReceivedTimestamp));
    expect(got.find((e) => e.verb === 'get' && e.objectRef?.name === 'nope')).toMatchObject({ responseStatus: { code: 404, reason: 'NotFound' } });
    expect(got.find((e) => e.requestURI === '/version')).toMatchObject({ verb: 'get', responseStatus: { code: 200 } });
    expect(got.find((e) => e.requestURI === '/version').objectRef).toBeUndefined();
  });

  it('a policy: the first matching rule decides, None keeps a request out', async () => {
    const file = join(dir, 'policy.log');
    const s = await serverWith(
      `apiVersion: audit.orch.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/version", "/healthz*"]
- level: None
  verbs: [get]
  resources: [{group: "events.orch.io", resources: [events]}]
- level: Metadata
`,
      file,
    );
    try {
      await call(s.url, 'GET', '/version');
      await call(s.url, 'GET', '/healthz');
      await createNamespace(s.url, 'au2');
      await call(s.url, 'GET', `${EVENTS}/namespaces/au2/events/nope`);
      await call(s.url, 'GET', `${EVENTS}/namespaces/au2/events`);
    } finally {
      await s.stop();
    }
    const got = await events(file);
    expect(got.map((e) => `${e.verb} ${e.requestURI}`)).toEqual(['create /api/v1/namespaces', `list ${EVENTS}/namespaces/au2/events`]);
  });

  it('a policy file is checked as every configuration file: field paths, and the levels orchd records', () => {
    const file = join(dir, 'bad.yaml');
    return writeFile(file, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n').then(async () => {
      const old = loadServerConfig({ auditPolicy: file });
      expect(old.ok ? [] : old.problems.map((p) => p.message)).toEqual(['apiVersion: Unsupported value: "audit.k8s.io/v1": supported values: "audit.orch.io/v1"']);
      await writeFile(file, 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n- {}\n- level: Metadata\n  omitStages: [Later]\n');
      const bad = loadServerConfig({ auditPolicy: file });
      expect(bad.ok ? [] : bad.problems.map((p) => p.message)).toEqual([
        'rules[0].level: Unsupported value: "RequestResponse": supported values: "None", "Metadata"',
        'rules[1].level: Required value',
        'rules[2].omitStages[0]: Unsupported value: "Later": supported values: "RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"',
      ]);
    });
  });
});
