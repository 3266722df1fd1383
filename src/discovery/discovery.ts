/**
 * Discovery documents, built from the registry: /version, the legacy /api, /apis, /apis/<g> and
 * per group-version APIResourceLists, and the aggregated APIGroupDiscoveryList that kubectl 1.27+
 * asks for first. Shapes follow kube-apiserver (k8s.io/apiserver pkg/endpoints/discovery); names of
 * the served groups are orch.io, while the discovery protocol's own names (apidiscovery.k8s.io) stay,
 * because clients hard-code them.
 */
import { createHash } from 'node:crypto';
import { apiVersionOf, servedAt, type KindStrategy } from '../api/strategy.js';
import { parseAccept, rangeMatches } from './accept.js';
import { apiGroups, kindsAt } from './group-versions.js';
import { JSON_TYPE } from './accept.js';
import { perRegistry, served, type Served } from './served.js';

/** The Kubernetes release whose API orchd speaks. kubectl's dispatcher reads `minor` (see clients.md 1.2). */
export const KUBERNETES_VERSION = { major: '1', minor: '36', gitVersion: 'v1.36.0' } as const;

/** Every kind supports the full set of collection and item verbs (sorted, as kube-apiserver lists them). */
export const RESOURCE_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
/** The verbs a kind's main resource serves. */
export const verbsOf = (k: KindStrategy): string[] => RESOURCE_VERBS.filter((v) => v !== 'deletecollection' || k.deleteCollection !== false);
export const STATUS_VERBS = ['get', 'patch', 'update'] as const;
/** What a /scale subresource answers: an autoscaling/v1 Scale, whatever the kind. */
export const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' } as const;

export interface VersionOptions {
  gitCommit?: string;
  buildDate?: string;
  platform?: string;
}

/** Go's GOOS/GOARCH names, which clients expect in `platform`. */
const GOOS: Record<string, string> = { win32: 'windows' };
const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', ppc64: 'ppc64le' };

/**
 * The /version body. Kubernetes 1.36 reports its emulation and minimum-compatibility versions too.
 * goVersion and compiler name the runtime honestly (clients only display them).
 */
export function versionInfo(opts: VersionOptions = {}) {
  return {
    major: KUBERNETES_VERSION.major,
    minor: KUBERNETES_VERSION.minor,
    emulationMajor: KUBERNETES_VERSION.major,
    emulationMinor: KUBERNETES_VERSION.minor,
    minCompatibilityMajor: KUBERNETES_VERSION.major,
    minCompatibilityMinor: String(Number(KUBERNETES_VERSION.minor) - 1),
    gitVersion: KUBERNETES_VERSION.gitVersion,
    gitCommit: opts.gitCommit ?? '',
    gitTreeState: 'clean',
    buildDate: opts.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: opts.platform ?? `${GOOS[process.platform] ?? process.platform}/${GOARCH[process.arch] ?? process.arch}`,
  };
}

/**
 * kube-apiserver's StorageVersionHash: base64 of the first 8 bytes of SHA-256 over
 * "group/version/kind" of the storage (preferred) version. Clients compare it for equality only.
 */
export function storageVersionHash(kind: KindStrategy): string {
  const digest = createHash('sha256').update(`${kind.group}/${kind.versions[0]}/${kind.kind}`).digest();
  return digest.subarray(0, 8).toString('base64');
}

/** GET /api: the core versions, and where clients in any network reach the server. */
export function apiVersions(kinds: readonly KindStrategy[], serverAddress: string) {
  const core = apiGroups(kinds).find((g) => g.name === '');
  return {
    kind: 'APIVersions',
    versions: core?.versions ?? ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroupOf(name: string, versions: string[]) {
  const gvs = versions.map((version) => ({ groupVersion: apiVersionOf({ group: name }, version), version }));
  return { name, versions: gvs, preferredVersion: gvs[0] };
}

/** GET /apis: every named group, its versions and the preferred one. */
export function apiGroupList(kinds: readonly KindStrategy[]) {
  const groups = apiGroups(kinds).filter((g) => g.name !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => apiGroupOf(g.name, g.versions)) };
}

/** GET /apis/<group>, or undefined when the group is not served. */
export function apiGroup(kinds: readonly KindStrategy[], name: string) {
  const group = name ? apiGroups(kinds).find((g) => g.name === name) : undefined;
  return group && { kind: 'APIGroup', apiVersion: 'v1', ...apiGroupOf(group.name, group.versions) };
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** GET /api/v1 or /apis/<group>/<version>: the resources (and their /status) served there. */
export function apiResourceList(kinds: readonly KindStrategy[], group: string, version: string) {
  const served = kindsAt(kinds, group, version).map((k) => servedAt(k, version));
  if (served.length === 0) return undefined;
  const resources = served.flatMap((k) => [
    {
      name: k.plural,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: verbsOf(k),
      ...(k.shortNames?.length ? { shortNames: k.shortNames } : {}),
      ...(k.categories?.length ? { categories: k.categories } : {}),
      storageVersionHash: storageVersionHash(k),
    },
    ...(k.hasStatus ? [{ name: `${k.plural}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: [...STATUS_VERBS] }] : []),
    ...(k.scale ? [{ name: `${k.plural}/scale`, singularName: '', namespaced: k.namespaced, ...SCALE_KIND, verbs: [...STATUS_VERBS] }] : []),
    ...(k.finalizeUpdate ? [{ name: `${k.plural}/finalize`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: ['update'] }] : []),
  ]);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group }, version), resources: resources.sort(byName) };
}

export type AggregatedVersion = 'v2' | 'v2beta1';

function discoveryResource(kind: KindStrategy, version: string) {
  const k = servedAt(kind, version);
  const responseKind = { group: k.group, version, kind: k.kind };
  const subresources = [
    ...(k.hasStatus ? [{ subresource: 'status', responseKind, verbs: [...STATUS_VERBS] }] : []),
    ...(k.scale ? [{ subresource: 'scale', responseKind: { ...SCALE_KIND }, verbs: [...STATUS_VERBS] }] : []),
    ...(k.finalizeUpdate ? [{ subresource: 'finalize', responseKind, verbs: ['update'] }] : []),
  ];
  return {
    resource: k.plural,
    responseKind,
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: k.singular,
    verbs: verbsOf(k),
    ...(k.shortNames?.length ? { shortNames: k.shortNames } : {}),
    ...(k.categories?.length ? { categories: k.categories } : {}),
    ...(subresources.length > 0 ? { subresources } : {}),
  };
}

/**
 * The aggregated discovery answer to GET /api (`scope` 'api': the core group, one item whose
 * metadata has no name) or GET /apis (every named group). v2 and v2beta1 have the same shape.
 */
export function aggregatedDiscovery(kinds: readonly KindStrategy[], scope: 'api' | 'apis', version: AggregatedVersion) {
  const groups = apiGroups(kinds).filter((g) => (scope === 'api') === (g.name === ''));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { ...(g.name ? { name: g.name } : {}), creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        resources: kindsAt(kinds, g.name, v)
          .map((k) => discoveryResource(k, v))
          .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0)),
        freshness: 'Current',
      })),
    })),
  };
}

export type DiscoveryForm = { form: 'aggregated'; version: AggregatedVersion; contentType: string } | { form: 'legacy'; contentType: string };

const aggregatedType = (v: AggregatedVersion) => `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;

/**
 * Which answer GET /api and /apis give for an Accept header. As in kube-apiserver, the first range
 * (in the client's preference order) asking for an APIGroupDiscoveryList of a version we serve wins,
 * wherever plain JSON sits in the list; otherwise the legacy document. The Content-Type must repeat
 * the chosen version: kubectl ignores an aggregated body sent as plain application/json.
 *
 *   1.27–1.29: `…;v=v2beta1;as=APIGroupDiscoveryList,application/json` → aggregated v2beta1
 *   1.30+:     `…;v=v2;…,…;v=v2beta1;…,application/json`              → aggregated v2
 *   `application/json, *\/*`                                            → legacy
 */
export function negotiateDiscovery(accept: string | string[] | undefined): DiscoveryForm {
  for (const r of parseAccept(accept)) {
    if (!rangeMatches(r, 'application', 'json')) continue;
    const { as, g, v } = r.params;
    if (as === 'APIGroupDiscoveryList' && g === 'apidiscovery.k8s.io' && (v === 'v2' || v === 'v2beta1')) {
      return { form: 'aggregated', version: v, contentType: aggregatedType(v) };
    }
  }
  return { form: 'legacy', contentType: JSON_TYPE };
}

/** The discovery answers of one registry, encoded once. */
export interface DiscoveryDocuments {
  version: Served;
  /** GET /api or /apis in the form the Accept header picks (see negotiateDiscovery). */
  root(path: 'api' | 'apis', accept: string | string[] | undefined, serverAddress?: string): Served;
  /** GET /apis/<group>; undefined → 404. */
  group(name: string): Served | undefined;
  /** GET /api/v1 or /apis/<group>/<version>; undefined → 404. */
  groupVersion(group: string, version: string): Served | undefined;
}

/** Where clients are told to reach the server when the caller does not say: orchd's default listen address. */
export const DEFAULT_SERVER_ADDRESS = '127.0.0.1:8080';

const json = (doc: unknown, contentType = JSON_TYPE): Served => served(JSON.stringify(doc), contentType);

/**
 * Memoized per registry: every kubectl command starts with these requests. Only documents that exist
 * are cached, so requests for unknown groups cannot grow the cache.
 */
export const discoveryDocuments = perRegistry((kinds: readonly KindStrategy[]): DiscoveryDocuments => {
  const cache = new Map<string, Served>();
  const cached = (key: string, make: () => Served): Served => {
    let doc = cache.get(key);
    if (!doc) cache.set(key, (doc = make()));
    return doc;
  };
  // "<group>/<version>" for each served group-version, and "<group>/" for each named group.
  const servedGroupVersions = new Set(apiGroups(kinds).flatMap((g) => [...g.versions.map((v) => `${g.name}/${v}`), ...(g.name ? [`${g.name}/`] : [])]));
  const version = json(versionInfo());
  return {
    version,
    root(path, accept, serverAddress = DEFAULT_SERVER_ADDRESS) {
      const form = negotiateDiscovery(accept);
      if (form.form === 'aggregated') return cached(`${path}:${form.version}`, () => json(aggregatedDiscovery(kinds, path, form.version), form.contentType));
      if (path === 'apis') return cached('apis', () => json(apiGroupList(kinds)));
      // Small, and it depends on the address the caller reports: not worth caching per address.
      return json(apiVersions(kinds, serverAddress));
    },
    group(name) {
      if (!servedGroupVersions.has(`${name}/`)) return undefined;
      return cached(`group:${name}`, () => json(apiGroup(kinds, name)));
    },
    groupVersion(group, version) {
      if (!servedGroupVersions.has(`${group}/${version}`)) return undefined;
      return cached(`gv:${group}/${version}`, () => json(apiResourceList(kinds, group, version)));
    },
  };
});
