/**
 * RBAC end to end: roles and bindings written through the real HTTP server, and the RBAC authorizer
 * deciding over what the store holds (through the same store-backed source orchd wires in).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRbacSource } from '../../src/registry/rbac-source.js';
import { rbacAuthorizer } from '../../src/auth/rbac-authorizer.js';
import type { AuthorizationAttributes, AuthorizationDecision } from '../../src/api/authorization.js';
import { call, serverForFile, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

const G = 'rbac.authorization.orch.io';
const V1 = `/apis/${G}/v1`;
const file = serverForFile();

let source: StoreRbacSource;
let authorize: (a: AuthorizationAttributes) => AuthorizationDecision;

async function create(path: string, body: Record<string, unknown>): Promise<void> {
  const r = await call(file.base, 'POST', path, body);
  expect(r.status, r.text).toBe(201);
}
const roleIn = (ns: string, name: string, rules: object[]) => create(`${V1}/namespaces/${ns}/roles`, { apiVersion: `${G}/v1`, kind: 'Role', metadata: { name }, rules });
const clusterRoleNamed = (name: string, rules: object[]) => create(`${V1}/clusterroles`, { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
const bindingIn = (ns: string, name: string, roleRef: { kind: string; name: string }, subjects: object[]) =>
  create(`${V1}/namespaces/${ns}/rolebindings`, { apiVersion: `${G}/v1`, kind: 'RoleBinding', metadata: { name }, roleRef: { apiGroup: G, ...roleRef }, subjects });
const clusterBinding = (name: string, role: string, subjects: object[]) =>
  create(`${V1}/clusterrolebindings`, { apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: role }, subjects });

const user = (username: string, groups: string[] = ['system:authenticated']) => ({ username, groups });
const resource = (who: ReturnType<typeof user>, verb: string, r: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: who,
  verb,
  isResourceRequest: true,
  apiGroup: '',
  ...r,
});
const path = (who: ReturnType<typeof user>, verb: string, p: string): AuthorizationAttributes => ({ user: who, verb, isResourceRequest: false, path: p });
const events = (ns: string, extra: Partial<AuthorizationAttributes> = {}) => ({ apiGroup: 'events.orch.io', resource: 'events', namespace: ns, ...extra });

beforeAll(async () => {
  source = new StoreRbacSource(file.server.store);
  const authz = rbacAuthorizer(source);
  authorize = (a) => authz.authorize(a);
  for (const ns of ['dev', 'prod']) await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
afterAll(() => source?.close());

describe('bootstrap policy', () => {
  it('the default cluster roles and bindings exist after start, labelled and annotated as Kubernetes does', async () => {
    const roles = await call(file.base, 'GET', `${V1}/clusterroles?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults`);
    expect(roles.body.items.map((i: any) => i.metadata.name)).toEqual(['cluster-admin', 'system:basic-user', 'system:discovery', 'system:public-info-viewer']);
    for (const r of roles.body.items) expect(r.metadata.annotations).toEqual({ [`${G}/autoupdate`]: 'true' });
    const viewer = await call(file.base, 'GET', `${V1}/clusterrolebindings/system:public-info-viewer`);
    expect(viewer.body.subjects).toEqual([
      { apiGroup: G, kind: 'Group', name: 'system:authenticated' },
      { apiGroup: G, kind: 'Group', name: 'system:unauthenticated' },
    ]);
    expect(viewer.body.metadata.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
  });

  it('public-info-viewer lets anonymous users read /version and health, and nothing else', () => {
    const anonymous = user('system:anonymous', ['system:unauthenticated']);
    expect(authorize(path(anonymous, 'get', '/version'))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"',
    });
    expect(authorize(path(anonymous, 'get', '/readyz')).decision).toBe('allow');
    expect(authorize(path(anonymous, 'post', '/version')).decision).toBe('noOpinion');
    expect(authorize(path(anonymous, 'get', '/apis')).decision).toBe('noOpinion');
    expect(authorize(resource(anonymous, 'list', { resource: 'namespaces' })).decision).toBe('noOpinion');
  });

  it('discovery is for authenticated users; system:masters may do anything', () => {
    expect(authorize(path(user('carol'), 'get', '/apis/events.orch.io/v1'))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"',
    });
    const admin = user('root', ['system:masters', 'system:authenticated']);
    expect(authorize(resource(admin, 'delete', { apiGroup: G, resource: 'clusterroles', name: 'cluster-admin' }))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"',
    });
    expect(authorize(path(admin, 'put', '/anything/at/all')).decision).toBe('allow');
  });
});

describe('RBAC kinds over HTTP', () => {
  it('creates, reads, updates, lists and deletes a Role', async () => {
    await roleIn('dev', 'scratch', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }]);
    const got = await call(file.base, 'GET', `${V1}/namespaces/dev/roles/scratch`);
    expect(got.body).toMatchObject({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name: 'scratch', namespace: 'dev' } });
    got.body.rules[0].verbs = ['get', 'list'];
    const put = await call(file.base, 'PUT', `${V1}/namespaces/dev/roles/scratch`, got.body);
    expect(put.status, put.text).toBe(200);
    expect(put.body.rules[0].verbs).toEqual(['get', 'list']);
    const list = await call(file.base, 'GET', `${V1}/roles`);
    expect(list.body).toMatchObject({ kind: 'RoleList', apiVersion: `${G}/v1` });
    expect(list.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toContain('dev/scratch');
    expect((await call(file.base, 'DELETE', `${V1}/namespaces/dev/roles/scratch`)).status).toBe(200);
    expect((await call(file.base, 'GET', `${V1}/namespaces/dev/roles/scratch`)).status).toBe(404);
  });

  it('refuses invalid rules with their field paths', async () => {
    const r = await call(file.base, 'POST', `${V1}/namespaces/dev/roles`, {
      apiVersion: `${G}/v1`,
      kind: 'Role',
      metadata: { name: 'bad' },
      rules: [
        { apiGroups: [''], resources: ['namespaces'] },
        { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      ],
    });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { group: G, kind: 'Role', name: 'bad' } });
    expect(r.body.details.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'rules[0].verbs', message: 'Required value: verbs must contain at least one value' },
      { reason: 'FieldValueInvalid', field: 'rules[1].nonResourceURLs', message: 'Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs' },
    ]);
  });

  it('defaults roleRef.apiGroup and subject groups; refuses a ClusterRoleBinding to a Role', async () => {
    const r = await call(file.base, 'POST', `${V1}/namespaces/dev/rolebindings`, {
      apiVersion: `${G}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'defaults' },
      roleRef: { kind: 'Role', name: 'whatever' },
      subjects: [
        { kind: 'User', name: 'u' },
        { kind: 'ServiceAccount', name: 'sa' },
      ],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.roleRef).toEqual({ apiGroup: G, kind: 'Role', name: 'whatever' });
    expect(r.body.subjects).toEqual([
      { apiGroup: G, kind: 'User', name: 'u' },
      { kind: 'ServiceAccount', name: 'sa' },
    ]);
    const bad = await call(file.base, 'POST', `${V1}/clusterrolebindings`, {
      apiVersion: `${G}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'to-a-role' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'x' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'ClusterRoleBinding.rbac.authorization.orch.io "to-a-role" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]',
    );
  });

  it('a binding keeps its roleRef: changing it is refused, changing subjects is not', async () => {
    await bindingIn('dev', 'fixed', { kind: 'Role', name: 'one' }, [{ kind: 'User', name: 'u' }]);
    const got = (await call(file.base, 'GET', `${V1}/namespaces/dev/rolebindings/fixed`)).body;
    const moved = await call(file.base, 'PUT', `${V1}/namespaces/dev/rolebindings/fixed`, { ...got, roleRef: { ...got.roleRef, name: 'two' } });
    expect(moved.status).toBe(422);
    expect(moved.body.message).toBe(`RoleBinding.rbac.authorization.orch.io "fixed" is invalid: roleRef: Invalid value: {"apiGroup":"${G}","kind":"Role","name":"two"}: cannot change roleRef`);
    const patched = await call(file.base, 'PATCH', `${V1}/namespaces/dev/rolebindings/fixed`, { subjects: [{ kind: 'Group', name: 'g' }] }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.subjects).toEqual([{ apiGroup: G, kind: 'Group', name: 'g' }]);
  });
});

describe('RBAC decisions over stored roles', () => {
  beforeAll(async () => {
    await roleIn('dev', 'event-reader', [{ apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] }]);
    await bindingIn('dev', 'alice-reads-events', { kind: 'Role', name: 'event-reader' }, [{ kind: 'User', name: 'alice' }]);
  });

  it('a Role bound to a user allows what it names in its namespace only', () => {
    expect(authorize(resource(user('alice'), 'get', events('dev', { name: 'e1' })))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "alice-reads-events/dev" of Role "event-reader" to User "alice"',
    });
    expect(authorize(resource(user('alice'), 'list', events('dev'))).decision).toBe('allow');
    expect(authorize(resource(user('alice'), 'get', events('prod', { name: 'e1' })))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(authorize(resource(user('alice'), 'list', events('')))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(authorize(resource(user('alice'), 'delete', events('dev', { name: 'e1' }))).decision).toBe('noOpinion');
    expect(authorize(resource(user('alice'), 'get', { ...events('dev', { name: 'e1' }), apiGroup: '' })).decision).toBe('noOpinion');
    expect(authorize(resource(user('bob'), 'get', events('dev', { name: 'e1' }))).decision).toBe('noOpinion');
  });

  it("a ClusterRole bound by a RoleBinding grants within the binding's namespace", async () => {
    await clusterRoleNamed('event-writer', [{ apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['create', 'update'] }]);
    await bindingIn('prod', 'dana-writes', { kind: 'ClusterRole', name: 'event-writer' }, [{ kind: 'User', name: 'dana' }]);
    expect(authorize(resource(user('dana'), 'create', events('prod')))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "dana-writes/prod" of ClusterRole "event-writer" to User "dana"',
    });
    expect(authorize(resource(user('dana'), 'create', events('dev'))).decision).toBe('noOpinion');
  });

  it("groups, and service accounts (a RoleBinding's own namespace by default)", async () => {
    await roleIn('dev', 'ns-reader', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }]);
    await bindingIn('dev', 'readers', { kind: 'Role', name: 'ns-reader' }, [
      { kind: 'Group', name: 'auditors' },
      { kind: 'ServiceAccount', name: 'builder' },
      { kind: 'ServiceAccount', name: 'deployer', namespace: 'prod' },
    ]);
    const get = (who: ReturnType<typeof user>) => authorize(resource(who, 'get', { resource: 'namespaces', namespace: 'dev', name: 'dev' }));
    expect(get(user('eve', ['auditors']))).toEqual({ decision: 'allow', reason: 'RBAC: allowed by RoleBinding "readers/dev" of Role "ns-reader" to Group "auditors"' });
    expect(get(user('system:serviceaccount:dev:builder'))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "readers/dev" of Role "ns-reader" to ServiceAccount "builder/dev"',
    });
    expect(get(user('system:serviceaccount:prod:deployer')).reason).toBe('RBAC: allowed by RoleBinding "readers/dev" of Role "ns-reader" to ServiceAccount "deployer/prod"');
    expect(get(user('system:serviceaccount:prod:builder')).decision).toBe('noOpinion');
    expect(get(user('auditors')).decision).toBe('noOpinion');
  });

  it('a ClusterRoleBinding grants a service account everywhere', async () => {
    await clusterRoleNamed('ns-lister', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }]);
    await clusterBinding('monitor-lists', 'ns-lister', [{ kind: 'ServiceAccount', name: 'monitor', namespace: 'ops' }]);
    expect(authorize(resource(user('system:serviceaccount:ops:monitor'), 'list', { resource: 'namespaces' }))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "monitor-lists" of ClusterRole "ns-lister" to ServiceAccount "monitor/ops"',
    });
  });

  it('resourceNames limit a rule to named objects: a list or a create without a name is not covered', async () => {
    await roleIn('dev', 'one-event', [{ apiGroups: ['events.orch.io'], resources: ['events'], resourceNames: ['e1'], verbs: ['get', 'list', 'create', 'update'] }]);
    await bindingIn('dev', 'frank-one-event', { kind: 'Role', name: 'one-event' }, [{ kind: 'User', name: 'frank' }]);
    const frank = user('frank');
    expect(authorize(resource(frank, 'get', events('dev', { name: 'e1' }))).decision).toBe('allow');
    expect(authorize(resource(frank, 'update', events('dev', { name: 'e1' }))).decision).toBe('allow');
    expect(authorize(resource(frank, 'get', events('dev', { name: 'e2' }))).decision).toBe('noOpinion');
    expect(authorize(resource(frank, 'list', events('dev'))).decision).toBe('noOpinion');
    expect(authorize(resource(frank, 'create', events('dev'))).decision).toBe('noOpinion');
  });

  it('subresources: "resource/sub" names one, "*/sub" that subresource of every resource; the resource alone does not cover them', async () => {
    await clusterRoleNamed('status-reader', [
      { apiGroups: [''], resources: ['namespaces/status'], verbs: ['get'] },
      { apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['patch'] },
    ]);
    await clusterBinding('gina-status', 'status-reader', [{ kind: 'User', name: 'gina' }]);
    const gina = user('gina');
    expect(authorize(resource(gina, 'get', { resource: 'namespaces', subresource: 'status', name: 'dev' })).decision).toBe('allow');
    expect(authorize(resource(gina, 'get', { resource: 'namespaces', name: 'dev' })).decision).toBe('noOpinion');
    expect(authorize(resource(gina, 'update', { apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'dev', name: 'web' })).decision).toBe('allow');
    expect(authorize(resource(gina, 'update', { apiGroup: 'apps', resource: 'deployments', namespace: 'dev', name: 'web' })).decision).toBe('noOpinion');
    expect(authorize(resource(gina, 'patch', { resource: 'namespaces', subresource: 'finalize', name: 'dev' })).decision).toBe('noOpinion');
  });

  it('non-resource URLs: exact paths, and a trailing "*" as a prefix', async () => {
    await clusterRoleNamed('log-reader', [{ nonResourceURLs: ['/logs/*', '/metrics'], verbs: ['get'] }]);
    await clusterBinding('hank-logs', 'log-reader', [{ kind: 'User', name: 'hank' }]);
    const hank = user('hank');
    expect(authorize(path(hank, 'get', '/metrics')).decision).toBe('allow');
    expect(authorize(path(hank, 'get', '/metrics/extra')).decision).toBe('noOpinion');
    expect(authorize(path(hank, 'get', '/logs/kube/today')).decision).toBe('allow');
    expect(authorize(path(hank, 'get', '/logs')).decision).toBe('noOpinion');
    expect(authorize(path(hank, 'post', '/logs/x')).decision).toBe('noOpinion');
    // A URL rule says nothing about resources.
    expect(authorize(resource(hank, 'get', { resource: 'logs' })).decision).toBe('noOpinion');
  });

  it('wildcards: "*" verbs, groups and resources', async () => {
    await roleIn('prod', 'everything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
    await bindingIn('prod', 'ivy-everything', { kind: 'Role', name: 'everything' }, [{ kind: 'User', name: 'ivy' }]);
    const ivy = user('ivy');
    expect(authorize(resource(ivy, 'deletecollection', events('prod'))).decision).toBe('allow');
    expect(authorize(resource(ivy, 'escalate', { apiGroup: G, resource: 'roles', subresource: 'x', namespace: 'prod', name: 'r' })).decision).toBe('allow');
    expect(authorize(resource(ivy, 'get', events('dev', { name: 'e' }))).decision).toBe('noOpinion');
  });

  it('a binding to a missing role has no opinion and says why; it applies once the role exists', async () => {
    await bindingIn('dev', 'jack-ghost', { kind: 'Role', name: 'ghost' }, [{ kind: 'User', name: 'jack' }]);
    await clusterBinding('jack-phantom', 'phantom', [{ kind: 'User', name: 'jack' }]);
    expect(authorize(resource(user('jack'), 'get', events('dev', { name: 'e' })))).toEqual({
      decision: 'noOpinion',
      reason: `RBAC: [clusterrole.${G} "phantom" not found, role.${G} "ghost" not found]`,
    });
    await roleIn('dev', 'ghost', [{ apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get'] }]);
    expect(authorize(resource(user('jack'), 'get', events('dev', { name: 'e' }))).decision).toBe('allow');
  });

  it('follows the store: a deleted binding no longer grants', async () => {
    await bindingIn('dev', 'kim-reads', { kind: 'Role', name: 'event-reader' }, [{ kind: 'User', name: 'kim' }]);
    expect(authorize(resource(user('kim'), 'get', events('dev', { name: 'e' }))).decision).toBe('allow');
    expect((await call(file.base, 'DELETE', `${V1}/namespaces/dev/rolebindings/kim-reads`)).status).toBe(200);
    expect(authorize(resource(user('kim'), 'get', events('dev', { name: 'e' }))).decision).toBe('noOpinion');
  });
});

describe('bootstrap policy across restarts', () => {
  it('recreates a deleted default role and keeps an edited one as it was edited', async () => {
    const dataDir = tempDir('orchd-rbac-restart-');
    const first = await startServer({ dataDir });
    try {
      expect((await call(first.url, 'DELETE', `${V1}/clusterroles/system:basic-user`)).status).toBe(200);
      const discovery = (await call(first.url, 'GET', `${V1}/clusterroles/system:discovery`)).body;
      discovery.rules[0].nonResourceURLs = ['/version'];
      expect((await call(first.url, 'PUT', `${V1}/clusterroles/system:discovery`, discovery)).status).toBe(200);
    } finally {
      await first.stop();
    }
    const second = await startServer({ dataDir });
    try {
      expect((await call(second.url, 'GET', `${V1}/clusterroles/system:basic-user`)).status).toBe(200);
      expect((await call(second.url, 'GET', `${V1}/clusterroles/system:discovery`)).body.rules[0].nonResourceURLs).toEqual(['/version']);
    } finally {
      await second.stop();
    }
  });
});
