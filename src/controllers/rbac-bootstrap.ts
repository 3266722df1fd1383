/**
 * The default ClusterRoles and ClusterRoleBindings Kubernetes' RBAC bootstraps at start
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), the ones that matter to orchd: the superuser
 * role for system:masters, discovery and self-review for every authenticated user, and the public
 * health and version endpoints for everyone, anonymous included.
 *
 * A missing one is created; an existing one is left as it is, edited or not (Kubernetes also
 * reconciles those marked autoupdate, adding back what was removed; orchd does not yet).
 */
import { RBAC_GROUP } from '../api/groups.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';

export const BOOTSTRAPPING_LABEL = 'kubernetes.io/bootstrapping';
export const AUTOUPDATE_ANNOTATION = `${RBAC_GROUP}/autoupdate`;

const metadata = (name: string) => ({
  name,
  labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' },
  annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
});

const clusterRoleOf = (name: string, rules: object[]): KubeObject => ({ apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: metadata(name), rules });

const bindingOf = (name: string, groups: string[]): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: metadata(name),
  roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
  subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
});

export const BOOTSTRAP_CLUSTER_ROLES: readonly KubeObject[] = [
  clusterRoleOf('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  clusterRoleOf('system:discovery', [{ nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
  clusterRoleOf('system:basic-user', [
    { apiGroups: ['authorization.orch.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.orch.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  clusterRoleOf('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  bindingOf('cluster-admin', ['system:masters']),
  bindingOf('system:discovery', ['system:authenticated']),
  bindingOf('system:basic-user', ['system:authenticated']),
  bindingOf('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
];

/**
 * Creates the default roles and bindings that are missing, when the server serves RBAC; a failure is
 * logged, not fatal (as for the system namespaces).
 */
export async function ensureBootstrapPolicy(objects: Registry, kinds: readonly KindStrategy[], logger: Logger): Promise<void> {
  const clusterRole = kinds.find((k) => k.group === RBAC_GROUP && k.plural === 'clusterroles');
  const clusterRoleBinding = kinds.find((k) => k.group === RBAC_GROUP && k.plural === 'clusterrolebindings');
  if (!clusterRole || !clusterRoleBinding) return;
  const ensure = async (kind: KindStrategy, obj: KubeObject) => {
    const name = obj.metadata.name ?? '';
    if (objects.current(kind, undefined, name)) return;
    await objects.create(kind, undefined, structuredClone(obj), { dryRun: false }).catch((err: unknown) => {
      logger.warn('could not create bootstrap RBAC policy', { kind: kind.kind, name, error: String(err) });
    });
  };
  for (const r of BOOTSTRAP_CLUSTER_ROLES) await ensure(clusterRole, r);
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) await ensure(clusterRoleBinding, b);
}
