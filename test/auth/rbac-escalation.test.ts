/**
 * Escalation prevention over roles and bindings written through the real server: a user may write
 * or bind only what they hold, unless they may `escalate` / `bind`, or are in system:masters.
 */
import { toStatus } from '../../src/http/respond/errors.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRbacSource } from '../../src/registry/rbac-source.js';
import { rbacAuthorizer } from '../../src/auth/rbac-authorizer.js';
import { rbacEscalationCheck, uncovered, type EscalationRequest } from '../../src/auth/rbac-escalation.js';
import { runWithAdmissionContext } from '../../src/admission/index.js';
import { Registry } from '../../src/registry/registry.js';
import { withRbacEscalationPrevention } from '../../src/registry/rbac-escalation-hook.js';
import { roleBinding } from '../../src/resources/role-binding.js';
import { role } from '../../src/resources/role.js';
import type { KubeObject } from '../../src/api/types.js';
import { call, serverForFile } from '../helpers/server.js';

const G = 'rbac.authorization.orch.io';
const V1 = `/apis/${G}/v1`;
const file = serverForFile();
let source: StoreRbacSource;
let check: ReturnType<typeof rbacEscalationCheck>;

async function create(path: string, body: Record<string, unknown>): Promise<void> {
  const r = await call(file.base, 'POST', path, { apiVersion: `${G}/v1`, ...body });
  expect(r.status, r.text).toBe(201);
}

const bob = { username: 'bob', groups: ['system:authenticated'] };
const READ_EVENTS = { apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get', 'list'] };

beforeAll(async () => {
  source = new StoreRbacSource(file.server.store);
  check = rbacEscalationCheck(source, rbacAuthorizer(source));
  for (const ns of ['dev', 'prod']) await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await create(`${V1}/namespaces/dev/roles`, { kind: 'Role', metadata: { name: 'event-reader' }, rules: [READ_EVENTS] });
  await create(`${V1}/namespaces/dev/rolebindings`, {
    kind: 'RoleBinding',
    metadata: { name: 'bob-reads' },
    roleRef: { apiGroup: G, kind: 'Role', name: 'event-reader' },
    subjects: [{ kind: 'User', name: 'bob' }],
  });
});
afterAll(() => source?.close());

describe('writing roles', () => {
  it('a role within what the user holds in that namespace is allowed', async () => {
    expect(await check({ user: bob, kind: 'Role', namespace: 'dev', name: 'r', rules: [{ ...READ_EVENTS, verbs: ['get'] }] })).toBeUndefined();
  });

  it('more than the user holds is forbidden, and the message lists what is missing', async () => {
    const rules = [
      { ...READ_EVENTS, verbs: ['get', 'delete', 'update'] },
      { apiGroups: [''], resources: ['namespaces'], resourceNames: ['dev'], verbs: ['get'] },
    ];
    expect(await check({ user: bob, kind: 'Role', namespace: 'dev', name: 'r', rules })).toEqual({
      reason: 'Forbidden',
      detail:
        'user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["namespaces"], ResourceNames:["dev"], Verbs:["get"]}\n' +
        '{APIGroups:["events.orch.io"], Resources:["events"], Verbs:["delete" "update"]}',
    });
  });

  it('what the user holds in one namespace does not count in another', async () => {
    expect(await check({ user: bob, kind: 'Role', namespace: 'prod', name: 'r', rules: [READ_EVENTS] })).toMatchObject({ reason: 'Forbidden' });
  });

  it('escalate on roles lets a user write more than they hold; system:masters always may', async () => {
    await create(`${V1}/namespaces/prod/roles`, { kind: 'Role', metadata: { name: 'role-escalator' }, rules: [{ apiGroups: [G], resources: ['roles'], verbs: ['escalate'] }] });
    await create(`${V1}/namespaces/prod/rolebindings`, {
      kind: 'RoleBinding',
      metadata: { name: 'bob-escalates' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'role-escalator' },
      subjects: [{ kind: 'User', name: 'bob' }],
    });
    const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    expect(await check({ user: bob, kind: 'Role', namespace: 'prod', name: 'r', rules: everything })).toBeUndefined();
    expect(await check({ user: bob, kind: 'Role', namespace: 'dev', name: 'r', rules: everything })).toMatchObject({ reason: 'Forbidden' });
    expect(await check({ user: { username: 'root', groups: ['system:masters'] }, kind: 'ClusterRole', namespace: '', name: 'c', rules: everything, aggregates: true })).toBeUndefined();
  });

  it('an aggregationRule needs cluster-admin powers', async () => {
    expect(await check({ user: bob, kind: 'ClusterRole', namespace: '', name: 'agg', rules: [], aggregates: true })).toEqual({
      reason: 'Forbidden',
      detail: 'must have cluster-admin privileges to use the aggregationRule',
    });
  });
});

describe('writing bindings', () => {
  it('binding a role whose permissions the user holds is allowed; a wider one is forbidden', async () => {
    const binding = (ref: { kind: string; name: string }, namespace = 'dev'): EscalationRequest => ({ user: bob, kind: 'RoleBinding', namespace, name: 'b', roleRef: ref });
    expect(await check(binding({ kind: 'Role', name: 'event-reader' }))).toBeUndefined();
    expect(await check(binding({ kind: 'ClusterRole', name: 'cluster-admin' }))).toMatchObject({ reason: 'Forbidden', detail: expect.stringContaining('user "bob"') });
    expect(await check(binding({ kind: 'Role', name: 'nothing-here' }))).toEqual({ reason: 'RoleNotFound', kind: 'Role', name: 'nothing-here' });
  });

  it('bind on the named role lets a user grant it without holding it', async () => {
    await create(`${V1}/namespaces/dev/roles`, {
      kind: 'Role',
      metadata: { name: 'admin-binder' },
      rules: [{ apiGroups: [G], resources: ['clusterroles'], resourceNames: ['cluster-admin'], verbs: ['bind'] }],
    });
    await create(`${V1}/namespaces/dev/rolebindings`, {
      kind: 'RoleBinding',
      metadata: { name: 'bob-binds' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'admin-binder' },
      subjects: [{ kind: 'User', name: 'bob' }],
    });
    expect(await check({ user: bob, kind: 'RoleBinding', namespace: 'dev', name: 'b', roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } })).toBeUndefined();
    expect(await check({ user: bob, kind: 'ClusterRoleBinding', namespace: '', name: 'b', roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } })).toMatchObject({ reason: 'Forbidden' });
  });
});

describe('covering rules', () => {
  it.each([
    ['"*" resources cover subresources', [{ apiGroups: [''], resources: ['*'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }], 0],
    ['"*/sub" covers that subresource only', [{ apiGroups: [''], resources: ['*/status'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['pods/status', 'pods/log'], verbs: ['get'] }], 1],
    ['a resource does not cover its subresources', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }], 1],
    ['no names covers any names', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'], verbs: ['get'] }], 0],
    ['named objects do not cover all objects', [{ apiGroups: [''], resources: ['pods'], resourceNames: ['a'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], 1],
    ['a URL prefix covers longer URLs', [{ nonResourceURLs: ['/logs/*'], verbs: ['get'] }], [{ nonResourceURLs: ['/logs/a', '/metrics'], verbs: ['get'] }], 1],
    ['"*" verbs and groups cover any', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch', 'escalate'] }], 0],
  ])('%s', (_name, owner, wanted, missing) => expect(uncovered(owner, wanted)).toHaveLength(missing));
});

describe('on the write path', () => {
  // The server's own store and generic write sequence, with the escalation hook in front of validation.
  const guarded = () => new Registry(file.server.store, { now: () => new Date() }, withRbacEscalationPrevention(undefined, check));
  const asBob = <T>(fn: () => Promise<T>) => runWithAdmissionContext({ user: { ...bob, uid: '', extra: {} }, warn() {}, annotate() {} }, fn);
  const roleObj = (name: string, rules: object[]): KubeObject => ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name }, rules }) as KubeObject;
  /** The Status a refused write is answered with (src/http's error table words the registry's error). */
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: unknown) => toStatus(err),
    );

  it('a create granting more than the writer holds answers 403 Forbidden naming the role and what is missing', async () => {
    const status = await asBob(() => refusal(guarded().create(role, 'dev', roleObj('wider', [{ ...READ_EVENTS, verbs: ['delete'] }]), { dryRun: false })));
    expect(status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      details: { name: 'wider', group: G, kind: 'roles' },
      message: `roles.${G} "wider" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["events.orch.io"], Resources:["events"], Verbs:["delete"]}`,
    });
    expect((await call(file.base, 'GET', `${V1}/namespaces/dev/roles/wider`)).status).toBe(404);
  });

  it('a create within what the writer holds is written; widening it by update is refused', async () => {
    const objects = guarded();
    await asBob(() => objects.create(role, 'dev', roleObj('narrow', [{ ...READ_EVENTS, verbs: ['get'] }]), { dryRun: false }));
    const widened = await asBob(() => refusal(objects.update(role, 'dev', 'narrow', (cur) => ({ ...cur!, rules: [{ ...READ_EVENTS, verbs: ['*'] }] }), { dryRun: false })));
    expect(widened).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('on a role wider than the writer holds, a finalizer alone is not checked, any other change is', async () => {
    const objects = guarded();
    // Written by the server itself (system:masters), so wider than Bob.
    await objects.create(role, 'dev', roleObj('wide', [{ ...READ_EVENTS, verbs: ['*'] }]), { dryRun: false });
    const finalized = await asBob(() => objects.update(role, 'dev', 'wide', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/keep'] } }), { dryRun: false }));
    expect(finalized.obj.metadata.finalizers).toEqual(['example.com/keep']);
    const labelled = await asBob(() => refusal(objects.update(role, 'dev', 'wide', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { a: 'b' } } }), { dryRun: false })));
    expect(labelled).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('a binding to a missing role answers 404 for the role', async () => {
    const binding = { apiVersion: `${G}/v1`, kind: 'RoleBinding', metadata: { name: 'b' }, roleRef: { apiGroup: G, kind: 'Role', name: 'ghost' }, subjects: [] } as KubeObject;
    expect(await asBob(() => refusal(guarded().create(roleBinding, 'dev', binding, { dryRun: false })))).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: `roles.${G} "ghost" not found`,
    });
  });
});
