/**
 * The REST operations of each kind at one version, as Kubernetes describes them in OpenAPI
 * (operationId, x-kubernetes-action, x-kubernetes-group-version-kind, query parameters), in a neutral
 * form that openapi.ts renders as Swagger 2.0 or OpenAPI 3.0.
 *
 * What clients read here: kubectl decides whether the server supports `fieldValidation` by finding
 * the PATCH operation whose x-kubernetes-group-version-kind is the kind and looking for that query
 * parameter among the operation's own parameters (cli-runtime's QueryParamVerifier, v2 in 1.27/1.28,
 * v3 after); without it kubectl 1.29+ falls back to fetching /openapi/v2. kubectl explain (v3)
 * finds a resource's kind from the GVK of the operations at its list or item path.
 */
import type { KindStrategy } from '../api/strategy.js';
import { prefixOf } from '../discovery/group-versions.js';
import { metaNames } from './meta.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface Parameter {
  name: string;
  in: 'query' | 'path';
  type: 'string' | 'boolean' | 'integer';
  description: string;
}

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
export type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection' | 'watch' | 'watchlist';

export interface Operation {
  method: Method;
  operationId: string;
  description: string;
  tags: string[];
  action?: Action;
  gvk?: GroupVersionKind;
  parameters: Parameter[];
  /** The request body: a definition name and the media types it may come in. */
  body?: { definition: string; mediaTypes: readonly string[] };
  /** Status code → (description, definition of the answer). */
  responses: Record<string, { description: string; definition: string }>;
  /** Media types of the answer. */
  produces: readonly string[];
}

export interface PathItem {
  path: string;
  /** Parameters every operation of the path takes (name, namespace, pretty). */
  parameters: Parameter[];
  operations: Operation[];
}

const q = (name: string, type: Parameter['type'], description: string): Parameter => ({ name, in: 'query', type, description });

/** Query parameters, described once (wording after the Kubernetes API reference). */
const P = {
  pretty: q('pretty', 'string', "If 'true', the output is pretty printed."),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Requests BOOKMARK watch events, which carry only a resourceVersion; the server may send them at its discretion.'),
  continue: q('continue', 'string', 'The continue token of the previous page of a limited list; served from the same snapshot.'),
  fieldSelector: q('fieldSelector', 'string', 'Restricts the objects returned by their fields. Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'Restricts the objects returned by their labels. Defaults to everything.'),
  limit: q('limit', 'integer', 'Maximum number of objects to return; when more exist, metadata.continue names the next page.'),
  resourceVersion: q('resourceVersion', 'string', 'Constrains which resource versions the request may be served from. Defaults to unset (the most recent).'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to a list: NotOlderThan or Exact.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'With watch=true, starts the stream with ADDED events for the current state, then a bookmark.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Bound on the duration of the list or watch call.'),
  watch: q('watch', 'boolean', 'Streams changes to the described resources (ADDED, MODIFIED, DELETED) from resourceVersion.'),
  dryRun: q('dryRun', 'string', '"All" runs every stage of the request without persisting the result.'),
  fieldManager: q('fieldManager', 'string', 'Name of the actor making the change, recorded in managedFields; required for apply patches.'),
  fieldValidation: q('fieldValidation', 'string', 'How unknown or duplicate fields in the body are handled: Ignore, Warn or Strict.'),
  force: q('force', 'boolean', 'Re-acquires fields owned by other managers in an apply patch; must be unset for other patches.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted; 0 deletes at once.'),
  ignoreStoreReadErrorWithClusterBreakingPotential: q('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean', 'Deletes an object whose stored data cannot be read. Use with care.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy. Whether dependents are orphaned.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Orphan, Background or Foreground: what happens to dependents.'),
};

const LIST_PARAMS = [P.allowWatchBookmarks, P.continue, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds, P.watch];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS = [...WRITE_PARAMS, P.force];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadErrorWithClusterBreakingPotential, P.orphanDependents, P.propagationPolicy];
const DELETE_COLLECTION_PARAMS = [P.continue, ...DELETE_PARAMS, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds];

const pathParam = (name: string, description: string): Parameter => ({ name, in: 'path', type: 'string', description });
const NAMESPACE = pathParam('namespace', 'Object name and auth scope, such as for teams and projects.');

/** The four ways a PATCH body can be written, by Content-Type. */
export const PATCH_MEDIA_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] as const;
const BODY_TYPES = ['application/json', 'application/yaml'] as const;
const ANSWER_TYPES = ['application/json', 'application/yaml'] as const;
const STREAM_TYPES = ['application/json', 'application/yaml', 'application/json;stream=watch'] as const;

/** "admissionregistration.orch.io" → "Admissionregistration", "" → "Core": the group part of operationIds. */
export function groupIdentifier(group: string): string {
  if (!group) return 'Core';
  return group
    .replace(/\.(orch|k8s)\.io$/, '')
    .split(/[.-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** "admissionregistration_v1", "core_v1": the tag grouping a group-version's operations. */
export const tagOf = (group: string, version: string): string => `${groupIdentifier(group).toLowerCase()}_${version}`;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const article = (kind: string) => (/^[AEIOU]/.test(kind) ? 'an' : 'a');

/** Definition names of a kind at a version: its object and its list. */
export interface KindNames {
  object: string;
  list: string;
}

/**
 * Every path of a kind at a version: the collection and item paths (namespaced ones under
 * namespaces/{namespace}, plus the all-namespaces list), /status when the kind has it, and the
 * deprecated /watch/ paths that orchd still routes. Each is written out in the order kube-openapi
 * lists them, so it can be compared with it.
 */
export function kindPaths(kind: KindStrategy, version: string, names: KindNames): PathItem[] {
  const o = new KindOperations(kind, version, names);
  return [...objectPaths(o), ...(kind.hasStatus ? [statusPath(o)] : []), ...(kind.namespaced ? allNamespacesPaths(o) : []), ...watchPaths(o)];
}

/** The operations of one kind at one version, and where they are: what each of its paths is written from. */
class KindOperations {
  readonly K: string;
  readonly ns: string;
  readonly root: string;
  readonly scoped: string;
  readonly watchScoped: string;
  readonly nameParam: Parameter;
  readonly scopeParams: Parameter[];
  /** A custom resource takes no strategic merge patch, and kubectl's client-side apply reads that here. */
  readonly patchTypes: readonly string[];
  readonly created: Operation['responses'];
  private readonly gvk: GroupVersionKind;
  private readonly id: string;
  private readonly tags: string[];

  constructor(
    readonly kind: KindStrategy,
    version: string,
    readonly names: KindNames,
  ) {
    this.K = kind.kind;
    this.ns = kind.namespaced ? 'Namespaced' : '';
    this.gvk = { group: kind.group, version, kind: kind.kind };
    this.id = `${groupIdentifier(kind.group)}${capitalize(version)}`;
    this.tags = [tagOf(kind.group, version)];
    this.root = prefixOf(kind.group, version);
    this.scoped = kind.namespaced ? `${this.root}/namespaces/{namespace}` : this.root;
    this.watchScoped = kind.namespaced ? `${this.root}/watch/namespaces/{namespace}` : `${this.root}/watch`;
    this.nameParam = pathParam('name', `Name of the ${kind.kind}.`);
    this.scopeParams = kind.namespaced ? [NAMESPACE] : [];
    this.patchTypes = kind.strategicMergePatch === false ? PATCH_MEDIA_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json') : PATCH_MEDIA_TYPES;
    this.created = { '200': { description: 'OK', definition: names.object }, '201': { description: 'Created', definition: names.object } };
  }

  /** One operation of this kind; `suffix` completes the operationId after verb and group-version. */
  op(method: Method, verb: string, action: Action, description: string, rest: Partial<Operation> & { suffix?: string } = {}): Operation {
    const { suffix = `${this.ns}${this.K}`, ...fields } = rest;
    return {
      method,
      operationId: `${verb}${this.id}${suffix}`,
      description,
      tags: this.tags,
      action,
      gvk: this.gvk,
      parameters: [],
      responses: { '200': { description: 'OK', definition: this.names.object } },
      produces: ANSWER_TYPES,
      ...fields,
    };
  }

  list(suffix: string, description: string): Operation {
    return this.op('get', 'list', 'list', description, { suffix, parameters: LIST_PARAMS, responses: { '200': { description: 'OK', definition: this.names.list } }, produces: STREAM_TYPES });
  }

  watch(suffix: string, action: Action, description: string): Operation {
    return this.op('get', 'watch', action, description, { suffix, responses: { '200': { description: 'OK', definition: metaNames.watchEvent } }, produces: STREAM_TYPES });
  }
}

const statusAnswer = (codes: string[]) => Object.fromEntries(codes.map((c) => [c, { description: c === '202' ? 'Accepted' : 'OK', definition: metaNames.status }]));

/** The collection (list, create, delete collection) and the item (read, replace, patch, delete). */
function objectPaths(o: KindOperations): PathItem[] {
  const { kind, K, ns, scoped, scopeParams, names, created } = o;
  return [
    {
      path: `${scoped}/${kind.plural}`,
      parameters: [...scopeParams, P.pretty],
      operations: [
        o.list(`${ns}${K}`, `list or watch objects of kind ${K}`),
        o.op('post', 'create', 'post', `create ${article(K)} ${K}`, {
          parameters: WRITE_PARAMS,
          body: { definition: names.object, mediaTypes: BODY_TYPES },
          responses: { ...created, '202': { description: 'Accepted', definition: names.object } },
        }),
        ...(kind.deleteCollection === false
          ? []
          : [
              o.op('delete', 'delete', 'deletecollection', `delete collection of ${K}`, {
                suffix: `Collection${ns}${K}`,
                parameters: DELETE_COLLECTION_PARAMS,
                body: { definition: metaNames.deleteOptions, mediaTypes: BODY_TYPES },
                responses: statusAnswer(['200']),
              }),
            ]),
      ],
    },
    {
      path: `${scoped}/${kind.plural}/{name}`,
      parameters: [o.nameParam, ...scopeParams, P.pretty],
      operations: [
        o.op('get', 'read', 'get', `read the specified ${K}`),
        o.op('put', 'replace', 'put', `replace the specified ${K}`, { parameters: WRITE_PARAMS, body: { definition: names.object, mediaTypes: BODY_TYPES }, responses: created }),
        o.op('patch', 'patch', 'patch', `partially update the specified ${K}`, {
          parameters: PATCH_PARAMS,
          body: { definition: metaNames.patch, mediaTypes: o.patchTypes },
          responses: created,
        }),
        o.op('delete', 'delete', 'delete', `delete ${article(K)} ${K}`, {
          parameters: DELETE_PARAMS,
          body: { definition: metaNames.deleteOptions, mediaTypes: BODY_TYPES },
          responses: statusAnswer(['200', '202']),
        }),
      ],
    },
  ];
}

/** The status subresource: read, replace, patch. */
function statusPath(o: KindOperations): PathItem {
  const { kind, K, ns, names, created } = o;
  return {
    path: `${o.scoped}/${kind.plural}/{name}/status`,
    parameters: [o.nameParam, ...o.scopeParams, P.pretty],
    operations: [
      o.op('get', 'read', 'get', `read status of the specified ${K}`, { suffix: `${ns}${K}Status` }),
      o.op('put', 'replace', 'put', `replace status of the specified ${K}`, {
        suffix: `${ns}${K}Status`,
        parameters: WRITE_PARAMS,
        body: { definition: names.object, mediaTypes: BODY_TYPES },
        responses: created,
      }),
      o.op('patch', 'patch', 'patch', `partially update status of the specified ${K}`, {
        suffix: `${ns}${K}Status`,
        parameters: PATCH_PARAMS,
        body: { definition: metaNames.patch, mediaTypes: o.patchTypes },
        responses: created,
      }),
    ],
  };
}

/** A namespaced kind's list and deprecated watch across all namespaces. */
function allNamespacesPaths(o: KindOperations): PathItem[] {
  const { kind, K, root } = o;
  return [
    { path: `${root}/${kind.plural}`, parameters: [P.pretty], operations: [o.list(`${K}ForAllNamespaces`, `list or watch objects of kind ${K}`)] },
    {
      path: `${root}/watch/${kind.plural}`,
      parameters: [...LIST_PARAMS, P.pretty],
      operations: [o.watch(`${K}ListForAllNamespaces`, 'watchlist', `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`)],
    },
  ];
}

/** The deprecated /watch/ paths of the collection and of one item. */
function watchPaths(o: KindOperations): PathItem[] {
  const { kind, K, ns, watchScoped, scopeParams } = o;
  return [
    {
      path: `${watchScoped}/${kind.plural}`,
      parameters: [...scopeParams, ...LIST_PARAMS, P.pretty],
      operations: [o.watch(`${ns}${K}List`, 'watchlist', `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`)],
    },
    {
      path: `${watchScoped}/${kind.plural}/{name}`,
      parameters: [o.nameParam, ...scopeParams, ...LIST_PARAMS, P.pretty],
      operations: [
        o.watch(
          `${ns}${K}`,
          'watch',
          `watch changes to an object of kind ${K}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
        ),
      ],
    },
  ];
}

/** A discovery endpoint (GET only, no GVK), e.g. /apis/<group>/<version>/ → APIResourceList. */
export function discoveryPath(path: string, operationId: string, description: string, tag: string, definition: string): PathItem {
  return {
    path,
    parameters: [],
    operations: [{ method: 'get', operationId, description, tags: [tag], parameters: [], responses: { '200': { description: 'OK', definition } }, produces: ANSWER_TYPES }],
  };
}
