/**
 * The OpenAPI documents kubectl reads before create, apply, replace, edit and explain:
 *
 * - /openapi/v3: an index of per group-version documents, each linked with `?hash=<ETag>` so
 *   clients cache them forever; the documents (OpenAPI 3.0) hold the kinds' schemas under
 *   components.schemas and their operations under paths.
 * - /openapi/v2: one Swagger 2.0 document of everything, in JSON or in gnostic's protobuf encoding
 *   (openapi-v2-protobuf.ts), which kubectl 1.27 and 1.28 require.
 *
 * Both carry x-kubernetes-group-version-kind with the served orch.io groups: a list on each kind's
 * schema, an object on each operation. kubectl explain and client-side apply find kinds by it.
 */
import { listMetaSchema } from '../resources/meta-schema.js';
import { str, type Schema } from '../api/schema.js';
import { servedAt, type KindStrategy } from '../api/strategy.js';
import type { JsonValue } from '../api/types.js';
import { parseAccept, rangeMatches } from '../discovery/accept.js';
import { KUBERNETES_VERSION } from '../discovery/discovery.js';
import { apiGroups, kindsAt, prefixOf } from '../discovery/group-versions.js';
import * as meta from './meta.js';
import { discoveryPath, groupIdentifier, kindPaths, tagOf, type GroupVersionKind, type KindNames, type Operation, type Parameter, type PathItem } from './paths.js';
import { Definitions, sortKeys, type Dialect, type JsonObject } from './schema.js';
import { JSON_TYPE } from '../discovery/accept.js';
import { perRegistry, served, type Served } from '../discovery/served.js';

export { etag, notModified } from '../discovery/served.js';

const GVK_EXTENSION = 'x-kubernetes-group-version-kind';
const INFO = { title: 'Kubernetes', version: KUBERNETES_VERSION.gitVersion };
const BEARER = { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' };

/**
 * Definition names of a kind at a version. The kind's schema is published under its refName for the
 * preferred version; other versions get the version segment swapped
 * (io.orch.api.admissionregistration.v1.X → …v1beta1.X), as each Kubernetes version has its own type.
 */
export function kindNames(kind: KindStrategy, version: string): KindNames {
  const preferred = kind.versions[0];
  const base = kind.schema.refName ?? `${groupPrefix(kind.group)}.${preferred}.${kind.kind}`;
  const segments = base.split('.');
  if (version !== preferred) {
    if (segments[segments.length - 2] === preferred) segments[segments.length - 2] = version;
    else segments.splice(segments.length - 1, 0, version);
  }
  const object = segments.join('.');
  return { object, list: [...segments.slice(0, -1), kind.listKind].join('.') };
}

/**
 * Where a kind's definitions are named from its group: io.orch.api.<group> for orch's groups, the
 * group's domain reversed for any other (a CRD's: stable.example.com → com.example.stable), as
 * kube-apiserver names them.
 */
function groupPrefix(group: string): string {
  if (!group) return 'io.orch.api.core';
  if (group === 'orch.io' || group.endsWith('.orch.io')) return `io.orch.api.${group.replace(/\.orch\.io$/, '')}`;
  return group.split('.').reverse().join('.');
}

/** The schema of a kind's list: metadata plus the items, each a reference to the kind at that version. */
function listSchema(kind: KindStrategy, names: KindNames): Schema {
  return {
    type: 'object',
    description: `${kind.listKind} is a list of ${kind.kind}.`,
    required: ['items'],
    properties: {
      apiVersion: str('Versioned schema of this representation; the server converts recognized versions.'),
      items: { type: 'array', items: { ...kind.schema, refName: names.object }, description: `List of ${kind.kind} objects.` },
      kind: str('REST resource this object represents, in CamelCase.'),
      metadata: listMetaSchema,
    },
  };
}

const gvkList = (gvk: GroupVersionKind): JsonObject => ({ [GVK_EXTENSION]: [{ ...gvk }] });

/** Publishes each kind served at group/version, and its list, with their GVKs; returns their paths. */
function defineKinds(defs: Definitions, kinds: readonly KindStrategy[], group: string, version: string): PathItem[] {
  return kindsAt(kinds, group, version).flatMap((k) => {
    const kind = servedAt(k, version);
    const names = kindNames(kind, version);
    defs.define(names.object, kind.schema, gvkList({ group, version, kind: kind.kind }));
    defs.define(names.list, listSchema(kind, names), gvkList({ group, version, kind: kind.listKind }));
    return kindPaths(kind, version, names);
  });
}

/** The protocol types operations refer to, with the GVKs Kubernetes gives them. */
function metaDefinitions(kinds: readonly KindStrategy[]): Map<string, { schema: Schema; extra: JsonObject }> {
  // DeleteOptions and WatchEvent exist in every group-version (they are how each is deleted and watched).
  const everyVersion = (kind: string) => apiGroups(kinds).flatMap((g) => g.versions.map((version) => ({ group: g.name, version, kind })));
  const entries: [Schema, JsonValue[] | undefined][] = [
    [meta.statusSchema, meta.metaGroupVersionKinds[meta.metaNames.status]],
    [meta.deleteOptionsSchema, everyVersion('DeleteOptions')],
    [meta.patchSchema, undefined],
    [meta.watchEventSchema, everyVersion('WatchEvent')],
    [meta.apiResourceListSchema, meta.metaGroupVersionKinds[meta.metaNames.apiResourceList]],
    [meta.apiVersionsSchema, meta.metaGroupVersionKinds[meta.metaNames.apiVersions]],
    [meta.apiGroupSchema, meta.metaGroupVersionKinds[meta.metaNames.apiGroup]],
    [meta.apiGroupListSchema, meta.metaGroupVersionKinds[meta.metaNames.apiGroupList]],
    [meta.versionInfoSchema, undefined],
  ];
  return new Map(
    entries.map(([schema, gvks]) => {
      const extra: JsonObject = gvks ? { [GVK_EXTENSION]: gvks } : {};
      return [schema.refName as string, { schema, extra }];
    }),
  );
}

/** Defines the meta types the operations of `paths` refer to (responses and bodies). */
function defineReferenced(defs: Definitions, paths: PathItem[], metas: ReturnType<typeof metaDefinitions>): void {
  for (const op of paths.flatMap((p) => p.operations)) {
    for (const name of [...Object.values(op.responses).map((r) => r.definition), ...(op.body ? [op.body.definition] : [])]) {
      const m = metas.get(name);
      if (m) defs.define(name, m.schema, m.extra);
    }
  }
}

function v3Parameter(p: Parameter): JsonObject {
  return { name: p.name, in: p.in, description: p.description, ...(p.in === 'path' ? { required: true } : {}), schema: { type: p.type } };
}

function v3Operation(op: Operation, defs: Definitions): JsonObject {
  const content = (types: readonly string[], definition: string) => Object.fromEntries(types.map((t) => [t, { schema: defs.ref(definition) }]));
  return {
    description: op.description,
    operationId: op.operationId,
    tags: op.tags,
    ...(op.parameters.length ? { parameters: op.parameters.map(v3Parameter) } : {}),
    ...(op.body ? { requestBody: { required: true, content: content(op.body.mediaTypes, op.body.definition) } } : {}),
    responses: Object.fromEntries(Object.entries(op.responses).map(([code, r]) => [code, { description: r.description, content: content(op.produces, r.definition) }])),
    ...(op.action ? { 'x-kubernetes-action': op.action } : {}),
    ...(op.gvk ? { [GVK_EXTENSION]: { ...op.gvk } } : {}),
  };
}

function v2Parameter(p: Parameter): JsonObject {
  return { name: p.name, in: p.in, type: p.type, description: p.description, ...(p.in === 'path' ? { required: true } : {}) };
}

function v2Operation(op: Operation, defs: Definitions): JsonObject {
  const body = op.body ? [{ name: 'body', in: 'body', required: true, schema: defs.ref(op.body.definition) }] : [];
  return {
    description: op.description,
    consumes: op.body && op.method === 'patch' ? [...op.body.mediaTypes] : ['*/*'],
    produces: [...op.produces],
    tags: op.tags,
    operationId: op.operationId,
    parameters: [...body, ...op.parameters.map(v2Parameter)],
    responses: Object.fromEntries(Object.entries(op.responses).map(([code, r]) => [code, { description: r.description, schema: defs.ref(r.definition) }])),
    ...(op.action ? { 'x-kubernetes-action': op.action } : {}),
    ...(op.gvk ? { [GVK_EXTENSION]: { ...op.gvk } } : {}),
  };
}

function renderPaths(paths: PathItem[], defs: Definitions, dialect: Dialect): JsonObject {
  const param = dialect === 'v3' ? v3Parameter : v2Parameter;
  const operation = dialect === 'v3' ? v3Operation : v2Operation;
  return Object.fromEntries(
    paths.map((p) => [p.path, { ...(p.parameters.length ? { parameters: p.parameters.map(param) } : {}), ...Object.fromEntries(p.operations.map((op) => [op.method, operation(op, defs)])) }]),
  );
}

/** A v3 document of some paths, with the definitions they need. */
function v3Document(paths: PathItem[], defs: Definitions, metas: ReturnType<typeof metaDefinitions>): JsonValue {
  defineReferenced(defs, paths, metas);
  const rendered = renderPaths(paths, defs, 'v3');
  return sortKeys({ openapi: '3.0.0', info: INFO, paths: rendered, components: { schemas: defs.all(), securitySchemes: { BearerToken: BEARER } } });
}

interface DiscoveryEntry {
  path: PathItem;
  /** Set for a group-version: its document also holds the kinds served there. */
  gv?: { group: string; version: string };
}

/** The discovery paths of the registry (/version/, /api/, /apis/, each group, each group-version), keyed as /openapi/v3 lists them. */
function discoveryPaths(kinds: readonly KindStrategy[]): Map<string, DiscoveryEntry> {
  const entries = new Map<string, DiscoveryEntry>([
    ['version', { path: discoveryPath('/version/', 'getCodeVersion', 'get the version information for this server', 'version', meta.metaNames.versionInfo) }],
    ['api', { path: discoveryPath('/api/', 'getCoreAPIVersions', 'get available API versions', 'core', meta.metaNames.apiVersions) }],
    ['apis', { path: discoveryPath('/apis/', 'getAPIVersions', 'get available API versions', 'apis', meta.metaNames.apiGroupList) }],
  ]);
  for (const g of apiGroups(kinds)) {
    const id = groupIdentifier(g.name);
    if (g.name) entries.set(`apis/${g.name}`, { path: discoveryPath(`/apis/${g.name}/`, `get${id}APIGroup`, 'get information of a group', id.toLowerCase(), meta.metaNames.apiGroup) });
    for (const version of g.versions) {
      const key = prefixOf(g.name, version).slice(1);
      const V = version.charAt(0).toUpperCase() + version.slice(1);
      const path = discoveryPath(`/${key}/`, `get${id}${V}APIResources`, 'get available resources', tagOf(g.name, version), meta.metaNames.apiResourceList);
      entries.set(key, { path, gv: { group: g.name, version } });
    }
  }
  return entries;
}

/**
 * Every /openapi/v3 document, by the key the index lists it under: "api/v1" and
 * "apis/<group>/<version>" (the kinds), and "version", "api", "apis", "apis/<group>" (discovery).
 */
export function openApiV3Documents(kinds: readonly KindStrategy[]): Map<string, JsonValue> {
  const metas = metaDefinitions(kinds);
  const docs = new Map<string, JsonValue>();
  for (const [key, { path, gv }] of discoveryPaths(kinds)) {
    const defs = new Definitions('v3');
    const paths = gv ? [...defineKinds(defs, kinds, gv.group, gv.version), path] : [path];
    docs.set(key, v3Document(paths, defs, metas));
  }
  return docs;
}

/** The link kubectl follows for one document; the hash makes the URL change whenever the document does. */
export const v3Url = (key: string, hash: string): string => `/openapi/v3/${key}?hash=${hash}`;

/** The Swagger 2.0 document of the whole registry. */
export function openApiV2Document(kinds: readonly KindStrategy[]): JsonValue {
  const defs = new Definitions('v2');
  const paths = [...[...discoveryPaths(kinds).values()].map((e) => e.path), ...apiGroups(kinds).flatMap((g) => g.versions.flatMap((v) => defineKinds(defs, kinds, g.name, v)))];
  defineReferenced(defs, paths, metaDefinitions(kinds));
  const rendered = renderPaths(paths, defs, 'v2');
  return sortKeys({ swagger: '2.0', info: INFO, paths: rendered, definitions: defs.all(), securityDefinitions: { BearerToken: BEARER }, security: [{ BearerToken: [] }] });
}

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** What kubectl 1.27/1.28 put in Accept. Not a valid MIME type (Go's mime parser rejects the `@`), so never sent back. */
const OPENAPI_V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/**
 * Which encoding of /openapi/v2 an Accept header wants (kube-openapi's handler): JSON for
 * application/json or a wildcard, protobuf for either protobuf name; undefined → 406.
 */
export function negotiateOpenApiV2(accept: string | string[] | undefined): 'json' | 'protobuf' | undefined {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'json';
  for (const r of ranges) {
    if (rangeMatches(r, 'application', 'json')) return 'json';
    const type = `${r.type}/${r.subtype}`;
    if (type === OPENAPI_V2_PROTOBUF || type === OPENAPI_V2_PROTOBUF_DEPRECATED) return 'protobuf';
  }
  return undefined;
}

/** The OpenAPI answers of one registry, encoded once. */
export interface OpenApiDocuments {
  /** GET /openapi/v3. */
  v3Index(): Served;
  /** GET /openapi/v3/<key>, e.g. "apis/events.orch.io/v1"; undefined → 404. A `?hash=` other than etag → redirect to v3Url(key, etag). */
  v3(key: string): Served | undefined;
  /** GET /openapi/v2 in the encoding the Accept header picks; undefined → 406. Both encodings share one ETag. */
  v2(accept: string | string[] | undefined): Promise<Served | undefined>;
}

const lazy = <T>(make: () => T): (() => T) => {
  let value: T | undefined;
  return () => (value ??= make());
};

/**
 * Memoized per registry, each document built on its first request. The protobuf form is encoded from
 * the JSON bytes so the document tree is not kept alive beside them.
 */
export const openApiDocuments = perRegistry((kinds: readonly KindStrategy[]): OpenApiDocuments => {
  const v3 = lazy(() => {
    const docs = new Map([...openApiV3Documents(kinds)].map(([key, doc]) => [key, served(JSON.stringify(doc), JSON_TYPE)]));
    const index = { paths: Object.fromEntries([...docs].map(([key, doc]) => [key, { serverRelativeURL: v3Url(key, doc.etag) }])) };
    return { docs, index: served(JSON.stringify(sortKeys(index)), JSON_TYPE) };
  });
  const v2Json = lazy(() => served(JSON.stringify(openApiV2Document(kinds)), JSON_TYPE));
  // kube-openapi gives both encodings the JSON's ETag; the answer varies by Accept.
  // The encoder (and protobufjs) is loaded by the first client that asks for protobuf (kubectl does).
  const v2Protobuf = lazy(async (): Promise<Served> => {
    const { encodeOpenApiV2 } = await import('./v2-protobuf.js');
    return { body: encodeOpenApiV2(JSON.parse(v2Json().body as string)), contentType: OPENAPI_V2_PROTOBUF, etag: v2Json().etag };
  });
  return {
    v3Index: () => v3().index,
    v3: (key) => v3().docs.get(key),
    async v2(accept) {
      const format = negotiateOpenApiV2(accept);
      return format === 'json' ? v2Json() : format === 'protobuf' ? v2Protobuf() : undefined;
    },
  };
});
