/**
 * The roles and bindings RBAC decides with, read from the store. Every request asks, role writes are
 * rare: the four collections are indexed once and the index is dropped whenever a committed change
 * touches one of them, to be rebuilt by the next request (as the admission policy registry does).
 */
import type { RbacBinding, RbacPolicyRule, RbacSource, RbacSubject } from '../auth/rbac-authorizer.js';
import { clusterRoleBinding } from '../resources/cluster-role-binding.js';
import { clusterRole } from '../resources/cluster-role.js';
import { isObject, listAt, objectAt, stringAt, stringsOf } from '../api/json-access.js';
import { roleBinding } from '../resources/role-binding.js';
import { role } from '../resources/role.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf } from '../api/object-keys.js';
import type { Store } from '../store/store.js';

interface Index {
  roles: Map<string, RbacPolicyRule[]>;
  clusterRoles: Map<string, RbacPolicyRule[]>;
  roleBindings: Map<string, RbacBinding[]>;
  clusterRoleBindings: RbacBinding[];
}

const ROLES = collectionOf(role);
const CLUSTER_ROLES = collectionOf(clusterRole);
const ROLE_BINDINGS = collectionOf(roleBinding);
const CLUSTER_ROLE_BINDINGS = collectionOf(clusterRoleBinding);
const WATCHED = [ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS].map((c) => `${c}/`);

const strings = (o: unknown, key: string): string[] => stringsOf(listAt(o, key));

/** The rules of a Role or ClusterRole, every list read as Go reads it (absent or mistyped: empty). */
export const policyRulesOf = (o: KubeObject): RbacPolicyRule[] =>
  listAt(o, 'rules').map((r) => ({
    verbs: strings(r, 'verbs'),
    apiGroups: strings(r, 'apiGroups'),
    resources: strings(r, 'resources'),
    resourceNames: strings(r, 'resourceNames'),
    nonResourceURLs: strings(r, 'nonResourceURLs'),
  }));

function bindingOf(o: KubeObject): RbacBinding {
  const ref = objectAt(o, 'roleRef');
  const subjects: RbacSubject[] = listAt(o, 'subjects')
    .filter(isObject)
    .map((s) => ({ kind: stringAt(s, 'kind'), name: stringAt(s, 'name'), namespace: stringAt(s, 'namespace') }));
  return { name: o.metadata.name ?? '', namespace: o.metadata.namespace ?? '', roleRef: { kind: stringAt(ref, 'kind'), name: stringAt(ref, 'name') }, subjects };
}

export class StoreRbacSource implements RbacSource {
  private index: Index | undefined;
  private readonly stop: () => void;

  constructor(private readonly store: Store) {
    const sub = store.changes$.subscribe((changes) => {
      if (this.index && changes.some((c) => WATCHED.some((p) => c.key.startsWith(p)))) this.index = undefined;
    });
    this.stop = () => sub.unsubscribe();
  }

  role(namespace: string, name: string): readonly RbacPolicyRule[] | undefined {
    return this.current().roles.get(`${namespace}/${name}`);
  }

  clusterRole(name: string): readonly RbacPolicyRule[] | undefined {
    return this.current().clusterRoles.get(name);
  }

  roleBindings(namespace: string): readonly RbacBinding[] {
    return this.current().roleBindings.get(namespace) ?? [];
  }

  clusterRoleBindings(): readonly RbacBinding[] {
    return this.current().clusterRoleBindings;
  }

  close(): void {
    this.stop();
  }

  private current(): Index {
    if (this.index) return this.index;
    const index: Index = { roles: new Map(), clusterRoles: new Map(), roleBindings: new Map(), clusterRoleBindings: [] };
    for (const { obj } of this.store.list(ROLES)) index.roles.set(`${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`, policyRulesOf(obj));
    for (const { obj } of this.store.list(CLUSTER_ROLES)) index.clusterRoles.set(obj.metadata.name ?? '', policyRulesOf(obj));
    for (const { obj } of this.store.list(ROLE_BINDINGS)) {
      const ns = obj.metadata.namespace ?? '';
      const list = index.roleBindings.get(ns);
      if (list) list.push(bindingOf(obj));
      else index.roleBindings.set(ns, [bindingOf(obj)]);
    }
    for (const { obj } of this.store.list(CLUSTER_ROLE_BINDINGS)) index.clusterRoleBindings.push(bindingOf(obj));
    this.index = index;
    return index;
  }
}
