/**
 * What a request asks to do, for the authorizer: Kubernetes' RequestInfoFactory, read from the
 * method, path and query alone (before routing, so a path that names nothing is authorized like
 * any other and only then found missing).
 *
 *   /api/{v}/…, /apis/{g}/{v}/… with a resource: a resource request. The verb comes from the
 *   method (POST create, GET/HEAD get, PUT update, PATCH patch, DELETE delete), or from a
 *   /watch/ or /proxy/ prefix. A GET without a name is list, or watch with `watch` set; a DELETE
 *   without a name is deletecollection. namespaces/{ns}/{resource}/… names a namespaced
 *   resource, namespaces/{ns}/status|finalize the namespace's own subresource. A
 *   `fieldSelector=metadata.name=x` list names x. list, watch and deletecollection carry their
 *   selectors (Kubernetes' AuthorizeWithSelectors), except behind a verb prefix.
 *   Anything else (/version, /apis, /api/v1, /healthz, /openapi/v3/…): a non-resource request,
 *   verb the lowercase method, and the path.
 */
import type { IncomingMessage } from 'node:http';
import type { AuthorizationAttributes } from '../api/authorization.js';
import type { UserInfo } from '../auth/user.js';
import { nameInFieldSelector } from '../registry/selection.js';
import { flag } from './codec/query.js';
import { internalError } from './respond/status.js';
import type { RequestTarget } from './request-target.js';

const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const VERBS_WITH_SELECTORS = new Set(['list', 'watch', 'deletecollection']);
const METHOD_VERBS: Record<string, string> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The name a list selects exactly by `metadata.name=x`, when x is a valid path segment. */
const exactName = (fieldSelector: string | null): string | undefined => (fieldSelector ? nameInFieldSelector(fieldSelector) : undefined);

/** Throws a 500 for a path with a verb prefix and nothing after it (Kubernetes' RequestInfo error). */
export function requestAttributes(req: Pick<IncomingMessage, 'method'>, target: RequestTarget, user: UserInfo): AuthorizationAttributes {
  const method = req.method ?? 'GET';
  const { path } = target;
  const base: AuthorizationAttributes = { user, verb: method.toLowerCase(), isResourceRequest: false, path };
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  let parts = trimmed === '' ? [] : trimmed.split('/');
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return base;
  let apiGroup = '';
  if (parts[0] === 'apis') {
    if (parts.length < 4) return base;
    apiGroup = parts[1];
    parts = parts.slice(2);
  } else parts = parts.slice(1);
  const apiVersion = parts[0];
  parts = parts.slice(1);

  let verb: string;
  let verbFromPrefix = false;
  if (SPECIAL_VERBS.has(parts[0])) {
    if (parts.length < 2) throw internalError(`failed to create RequestInfo: unable to determine kind and namespace from url, ${path}`);
    verb = parts[0];
    verbFromPrefix = true;
    parts = parts.slice(1);
  } else verb = METHOD_VERBS[method] ?? '';

  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  let name = parts.length >= 2 ? parts[1] : '';
  const subresource = parts.length >= 3 && verb !== 'proxy' ? parts[2] : '';

  const params = target.url.searchParams;
  if (name === '' && verb === 'get') {
    // Kubernetes' query conversion of a bool: anything but 0 and false is true (`watch=` too).
    verb = flag(params, 'watch') ? 'watch' : 'list';
    name = exactName(params.get('fieldSelector')) ?? '';
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  const selectors: Partial<AuthorizationAttributes> = {};
  if (!verbFromPrefix && VERBS_WITH_SELECTORS.has(verb)) {
    const field = params.get('fieldSelector');
    const label = params.get('labelSelector');
    if (field) selectors.fieldSelector = field;
    if (label) selectors.labelSelector = label;
  }
  return { user, verb, isResourceRequest: true, apiGroup, apiVersion, resource, subresource, namespace, name, ...selectors, path };
}
