import type { KindStrategy } from '../api/strategy.js';
import { isPathSegmentName } from '../api/name-formats.js';
import { badRequest } from './respond/status.js';

/** What a request path names, before the verb is known. */
export type Route =
  | { type: 'discovery'; path: 'version' | 'api' | 'apis' }
  | { type: 'discovery'; path: 'group'; group: string }
  | { type: 'discovery'; path: 'groupVersion'; group: string; version: string }
  | { type: 'openapi'; path: string }
  | { type: 'health'; check: 'healthz' | 'livez' | 'readyz' }
  | { type: 'metrics' }
  | { type: 'timeline'; path: string }
  | { type: 'debugLog'; path: string }
  | { type: 'debugFaults'; path: string }
  | ResourceRoute;

export interface ResourceRoute {
  type: 'resource';
  kind: KindStrategy;
  version: string;
  /** Set for namespaced paths; undefined for cluster-scoped kinds and all-namespaces lists. */
  namespace?: string;
  name?: string;
  /** finalize: a Namespace's spec.finalizers, by PUT only (kube-apiserver's namespaces/finalize). */
  subresource?: 'status' | 'scale' | 'finalize';
  /** The deprecated /watch/ prefix was used. */
  watchPrefix: boolean;
  /** A path a client hard-codes under a Kubernetes group name (KUBECTL_CRD_LIST): read, never written. */
  readOnly?: true;
}

/**
 * kubectl, on a kind its OpenAPI does not know, asks whether a CRD defines it by listing
 * /apis/apiextensions.k8s.io/v1/customresourcedefinitions (cli-runtime's CRDFromDynamic); a 404
 * there makes it print "failed to check CRD: failed to list CRDs" where kube-apiserver's answer lets
 * it go on to "no matches for kind … in version …". So that one path lists orchd's CRDs, read only
 * and in no discovery document, as the meta.k8s.io Table keeps its name for the clients that ask.
 */
const KUBECTL_CRD_LIST = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', servedAs: 'apiextensions.orch.io' };

/** What a write through the main resource or /status is, for the field manager (/scale is written as the main resource). */
export const statusOrMain = (r: ResourceRoute): { kind: KindStrategy; version: string; subresource?: 'status' } => ({
  kind: r.kind,
  version: r.version,
  ...(r.subresource === 'status' ? { subresource: 'status' as const } : {}),
});

/** Resolves group/version/plural to a kind; the registry is the only source of routes. */
export type KindLookup = (group: string, version: string, plural: string) => KindStrategy | undefined;

/**
 * Parses a request path, already percent-decoded (request-target.ts): split on '/' as Kubernetes
 * splits it, so a name with '/' can't be expressed. Never normalised: a `.` or `..` segment is a
 * segment like any other, so `…/x/..` names x's `..` subresource (404), not the collection. Returns
 * undefined for paths that name nothing (→ 404), among them every path with an empty segment
 * (`//`) except the namespace's (see checkRouteNames).
 */
export function route(path: string, lookup: KindLookup): Route | undefined {
  const segs = path.split('/').slice(1);
  if (segs.length > 0 && segs[segs.length - 1] === '') segs.pop();
  const [first] = segs;
  switch (first) {
    case 'version':
      return segs.length === 1 ? { type: 'discovery', path: 'version' } : undefined;
    case 'healthz':
    case 'livez':
    case 'readyz':
      return { type: 'health', check: first };
    case 'metrics':
      return segs.length === 1 ? { type: 'metrics' } : undefined;
    case 'openapi':
      return { type: 'openapi', path: segs.slice(1).join('/') };
    case 'debug':
      if (segs[1] === 'timeline') return { type: 'timeline', path: segs.slice(2).join('/') };
      if (segs[1] === 'faults') return { type: 'debugFaults', path: segs.slice(2).join('/') };
      return segs[1] === 'log' ? { type: 'debugLog', path: segs.slice(2).join('/') } : undefined;
    case 'api':
      if (segs.length === 1) return { type: 'discovery', path: 'api' };
      return resourcePath('', segs[1], segs.slice(2), lookup);
    case 'apis':
      if (segs.length === 1) return { type: 'discovery', path: 'apis' };
      if (segs.length === 2) return { type: 'discovery', path: 'group', group: segs[1] };
      return resourcePath(segs[1], segs[2], segs.slice(3), lookup);
    default:
      return undefined;
  }
}

function resourcePath(group: string, version: string, rest: string[], lookup: KindLookup): Route | undefined {
  if (rest.length === 0) return { type: 'discovery', path: 'groupVersion', group, version };
  const c = KUBECTL_CRD_LIST;
  if (group === c.group && version === c.version && rest.length === 1 && rest[0] === c.plural) {
    const kind = lookup(c.servedAs, version, c.plural);
    return kind ? { type: 'resource', kind, version, watchPrefix: false, readOnly: true } : undefined;
  }
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  // namespaces/<ns>/<plural>/… names a namespaced collection when <plural> is a namespaced kind of
  // this group-version; otherwise (core group) namespaces/<name>[/status] is the Namespace object.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const kind = lookup(group, version, rest[2]);
    if (kind?.namespaced) return item(kind, version, rest[1], rest.slice(3), watchPrefix);
  }
  const kind = lookup(group, version, rest[0]);
  if (!kind) return undefined;
  return item(kind, version, undefined, rest.slice(1), watchPrefix);
}

function item(kind: KindStrategy, version: string, namespace: string | undefined, rest: string[], watchPrefix: boolean): ResourceRoute | undefined {
  if (rest.length > 2) return undefined;
  const [name, sub] = rest;
  if (sub !== undefined && (watchPrefix || !((sub === 'status' && kind.hasStatus) || (sub === 'scale' && kind.scale) || (sub === 'finalize' && kind.finalizeUpdate)))) return undefined;
  if (name === '') return undefined;
  return {
    type: 'resource',
    kind,
    version,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(sub ? { subresource: sub as 'status' | 'scale' | 'finalize' } : {}),
    watchPrefix,
  };
}

/**
 * A list or watch at `namespaces//<resource>` reads every namespace, as Kubernetes reads it (its
 * authorization already saw the empty namespace: a cluster-wide request). Any other verb keeps the
 * empty namespace for checkRouteNames to refuse.
 */
export function readingEveryNamespace(r: ResourceRoute, method: string): ResourceRoute {
  if (r.namespace !== '' || r.name !== undefined || method !== 'GET') return r;
  const { namespace: _, ...everyNamespace } = r;
  return everyNamespace;
}

/**
 * What kube-apiserver's storage refuses (400) before it reads or writes anything: an empty namespace
 * on any request but a list or watch (readingEveryNamespace), and a name that is no path segment
 * (`.`, `..`, or with '/' or '%': Kubernetes' IsValidPathSegmentName).
 */
export function checkRouteNames(r: ResourceRoute): void {
  if (r.namespace === '') throw badRequest('Namespace parameter required.');
  if (r.name === undefined) return;
  const why = isPathSegmentName(r.name);
  if (why.length > 0) throw badRequest(`Name parameter invalid: ${JSON.stringify(r.name)}: ${why.join(';')}`);
}
