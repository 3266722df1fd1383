/**
 * A resource request's labels in /metrics, as kube-apiserver's instrumentation writes them: the verb
 * as it reports it (the HTTP method for writes, LIST and WATCH for collection reads, APPLY for a
 * server-side apply), the group, version, resource, subresource and scope the path names.
 */
import type { AuthorizationAttributes } from '../api/authorization.js';
import type { RequestLabels } from '../observability/metrics.js';
import type { ResourceRoute } from './router.js';

const REPORTED_VERBS: Readonly<Record<string, string>> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
};

export function requestLabels(r: ResourceRoute, a: Pick<AuthorizationAttributes, 'verb'>, contentType: string | undefined): RequestLabels {
  const verb = a.verb === 'patch' && contentType?.startsWith('application/apply-patch') ? 'APPLY' : (REPORTED_VERBS[a.verb] ?? a.verb.toUpperCase());
  return {
    verb,
    group: r.kind.group,
    version: r.version,
    resource: r.kind.plural,
    subresource: r.subresource ?? '',
    scope: r.name !== undefined ? 'resource' : r.namespace !== undefined ? 'namespace' : 'cluster',
  };
}
