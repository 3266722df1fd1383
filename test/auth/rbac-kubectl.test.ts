/**
 * kubectl and the RBAC kinds against a real orchd: `kubectl create -f`, `kubectl get` with the
 * Kubernetes columns, and the objects `kubectl create role|clusterrole|rolebinding|clusterrolebinding`
 * generate. Those commands post through client-go's typed RBAC client, whose group is hard-coded to
 * rbac.authorization.k8s.io, so here they generate (--dry-run=client, which still resolves
 * --resource through orchd's discovery) and the objects are created under the orch.io group.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { kubectlForFile } from '../helpers/kubectl.js';
import { call } from '../helpers/server.js';

const G = 'rbac.authorization.orch.io';
const session = kubectlForFile();
const { kubectl } = session;

beforeAll(async () => {
  expect((await call(session.server.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dev' } })).status).toBe(201);
});

/** The rows of `kubectl get` output, each split on runs of two or more spaces. */
const rows = (out: string): string[][] =>
  out
    .trimEnd()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

const manifests = `apiVersion: ${G}/v1
kind: Role
metadata:
  name: event-reader
  namespace: dev
rules:
- apiGroups: [events.orch.io]
  resources: [events]
  verbs: [get, list, watch]
---
apiVersion: ${G}/v1
kind: RoleBinding
metadata:
  name: read-events
  namespace: dev
roleRef:
  apiGroup: ${G}
  kind: Role
  name: event-reader
subjects:
- kind: User
  name: alice
- kind: Group
  name: auditors
- kind: ServiceAccount
  name: builder
  namespace: dev
---
apiVersion: ${G}/v1
kind: ClusterRole
metadata:
  name: health-reader
rules:
- nonResourceURLs: [/healthz, /livez]
  verbs: [get]
---
apiVersion: ${G}/v1
kind: ClusterRoleBinding
metadata:
  name: health-readers
roleRef:
  apiGroup: ${G}
  kind: ClusterRole
  name: health-reader
subjects:
- kind: Group
  name: system:authenticated
`;

describe('kubectl and RBAC', () => {
  test('create -f makes all four kinds; get prints their Kubernetes columns', async () => {
    const f = await session.file('rbac.yaml', manifests);
    const created = await kubectl(['create', '-f', f]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim().split('\n')).toEqual([
      `role.${G}/event-reader created`,
      `rolebinding.${G}/read-events created`,
      `clusterrole.${G}/health-reader created`,
      `clusterrolebinding.${G}/health-readers created`,
    ]);

    const roles = await kubectl(['get', 'roles', '-n', 'dev']);
    expect(roles.code, roles.stderr).toBe(0);
    const [head, row] = rows(roles.stdout);
    expect(head).toEqual(['NAME', 'CREATED AT']);
    expect(row[0]).toBe('event-reader');
    expect(row[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const bindings = await kubectl(['get', 'rolebindings', '-n', 'dev', '-o', 'wide']);
    expect(bindings.code, bindings.stderr).toBe(0);
    const [bHead, bRow] = rows(bindings.stdout);
    expect(bHead).toEqual(['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    expect([bRow[0], bRow[1], bRow[3], bRow[4], bRow[5]]).toEqual(['read-events', 'Role/event-reader', 'alice', 'auditors', 'dev/builder']);

    const clusterRoles = await kubectl(['get', 'clusterroles', '-o', 'name']);
    expect(clusterRoles.stdout.trim().split('\n')).toEqual(
      ['cluster-admin', 'health-reader', 'system:basic-user', 'system:discovery', 'system:public-info-viewer'].map((n) => `clusterrole.${G}/${n}`),
    );
    const crb = await kubectl(['get', 'clusterrolebinding', 'health-readers']);
    expect(rows(crb.stdout)[1].slice(0, 2)).toEqual(['health-readers', 'ClusterRole/health-reader']);
  });

  test('the roles and bindings kubectl create generates are accepted under the orch.io group', async () => {
    const generated = await Promise.all([
      kubectl(['create', 'role', 'pod-less', '-n', 'dev', '--verb=get,list', '--resource=events.events.orch.io', '--resource-name=e1', '--dry-run=client', '-o', 'yaml']),
      kubectl(['create', 'clusterrole', 'urls', '--verb=get', '--non-resource-url=/logs/*', '--dry-run=client', '-o', 'yaml']),
      kubectl(['create', 'rolebinding', 'rb', '-n', 'dev', '--role=pod-less', '--user=alice', '--group=team', '--serviceaccount=dev:builder', '--dry-run=client', '-o', 'yaml']),
      kubectl(['create', 'clusterrolebinding', 'crb', '--clusterrole=urls', '--serviceaccount=ops:monitor', '--dry-run=client', '-o', 'yaml']),
    ]);
    for (const g of generated) expect(g.code, g.stderr).toBe(0);
    const f = await session.file('generated.yaml', generated.map((g) => g.stdout.replaceAll('rbac.authorization.k8s.io', G)).join('---\n'));
    const created = await kubectl(['create', '-f', f]);
    expect(created.code, created.stderr).toBe(0);
    const rb = await call(session.server.url, 'GET', `/apis/${G}/v1/namespaces/dev/rolebindings/rb`);
    expect(rb.body.subjects).toEqual([
      { apiGroup: G, kind: 'User', name: 'alice' },
      { apiGroup: G, kind: 'Group', name: 'team' },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'dev' },
    ]);
    const role = await call(session.server.url, 'GET', `/apis/${G}/v1/namespaces/dev/roles/pod-less`);
    expect(role.body.rules).toEqual([{ apiGroups: ['events.orch.io'], resources: ['events'], resourceNames: ['e1'], verbs: ['get', 'list'] }]);
  });

  test('kubectl prints the field errors of an invalid role', async () => {
    const f = await session.file('bad.yaml', `apiVersion: ${G}/v1\nkind: Role\nmetadata:\n  name: bad\n  namespace: dev\nrules:\n- apiGroups: [""]\n  resources: [namespaces]\n`);
    const r = await kubectl(['create', '-f', f]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('rules[0].verbs: Required value: verbs must contain at least one value');
  });
});
