/**
 * The roles and bindings RBAC decides with, read from a real Store (src/registry/rbac-source.ts):
 * what the registry wrote, and a write seen at once by the next question.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { policyRulesOf, StoreRbacSource } from '../../src/registry/rbac-source.js';
import { openRegistry, roleIn, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
let source: StoreRbacSource;
beforeEach(async () => {
  r = await openRegistry();
  await r.namespace('dev');
  source = new StoreRbacSource(r.store);
});
afterEach(async () => {
  source.close();
  await r.close();
});

const binding = (name: string, roleName: string) => ({
  apiVersion: 'rbac.authorization.orch.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace: 'dev' },
  roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: roleName },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: 'bob' }],
});

describe('StoreRbacSource', () => {
  it('answers the roles and bindings the store holds, and sees a later write at once', async () => {
    expect(source.role('dev', 'reader')).toBeUndefined();
    await r.objects.create(r.kind('Role'), 'dev', roleIn('reader', 'dev'), { dryRun: false });
    expect(source.role('dev', 'reader')).toEqual([{ verbs: ['get', 'list', 'watch'], apiGroups: ['events.orch.io'], resources: ['events'], resourceNames: [], nonResourceURLs: [] }]);
    await r.objects.create(r.kind('RoleBinding'), 'dev', binding('read', 'reader'), { dryRun: false });
    expect(source.roleBindings('dev')).toEqual([{ name: 'read', namespace: 'dev', roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', name: 'bob', namespace: '' }] }]);
    expect(source.roleBindings('other')).toEqual([]);
    await r.objects.delete(r.kind('Role'), 'dev', 'reader', { dryRun: false });
    expect(source.role('dev', 'reader')).toBeUndefined();
  });

  it("reads a role's lists as Go reads them: absent or mistyped lists are empty", () => {
    expect(policyRulesOf({ apiVersion: 'v1', kind: 'Role', metadata: {}, rules: [{ verbs: 'get', apiGroups: [''] }] })).toEqual([
      { verbs: [], apiGroups: [''], resources: [], resourceNames: [], nonResourceURLs: [] },
    ]);
  });
});
