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
 * deprecated /watch/ paths that orchd still routes. Long: the paths are written out one after the
 * other, as kube-openapi lists them, so each can be compared with it.
 */
export function kindPaths(kind: KindStrategy, version: string, names: KindNames): PathItem[] {
  const gvk: GroupVersionKind = { group: kind.group, version, kind: kind.kind };
  const id = `${groupIdentifier(kind.group)}${capitalize(version)}`;
  const ns = kind.namespaced ? 'Namespaced' : '';
  const tags = [tagOf(kind.group, version)];
  const root = prefixOf(kind.group, version);
  const scoped = kind.namespaced ? `${root}/namespaces/{namespace}` : root;
  const watchScoped = kind.namespaced ? `${root}/watch/namespaces/{namespace}` : `${root}/watch`;
  const nameParam = pathParam('name', `Name of the ${kind.kind}.`);
  const scopeParams = kind.namespaced ? [NAMESPACE] : [];
  const K = kind.kind;
  // A custom resource takes no strategic merge patch, and kubectl's client-side apply reads that here.
  const patchTypes = kind.strategicMergePatch === false ? PATCH_MEDIA_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json') : PATCH_MEDIA_TYPES;

  /** One operation of this kind; `suffix` completes the operationId after verb and group-version. */
  const op = (method: Method, verb: string, action: Action, description: string, rest: Partial<Operation> & { suffix?: string } = {}): Operation => {
    const { suffix = `${ns}${K}`, ...fields } = rest;
    return {
      method,
      operationId: `${verb}${id}${suffix}`,
      description,
      tags,
      action,
      gvk,
      parameters: [],
      responses: { '200': { description: 'OK', definition: names.object } },
      produces: ANSWER_TYPES,
      ...fields,
    };
  };
  const created = { '200': { description: 'OK', definition: names.object }, '201': { description: 'Created', definition: names.object } };
  const statusAnswer = (codes: string[]) => Object.fromEntries(codes.map((c) => [c, { description: c === '202' ? 'Accepted' : 'OK', definition: metaNames.status }]));
  const list = (suffix: string, description: string) =>
    op('get', 'list', 'list', description, { suffix, parameters: LIST_PARAMS, responses: { '200': { description: 'OK', definition: names.list } }, produces: STREAM_TYPES });
  const watch = (suffix: string, action: Action, description: string) =>
    op('get', 'watch', action, description, { suffix, responses: { '200': { description: 'OK', definition: metaNames.watchEvent } }, produces: STREAM_TYPES });

  const paths: PathItem[] = [
    {
      path: `${scoped}/${kind.plural}`,
      parameters: [...scopeParams, P.pretty],
      operations: [
        list(`${ns}${K}`, `list or watch objects of kind ${K}`),
        op('post', 'create', 'post', `create ${article(K)} ${K}`, {
          parameters: WRITE_PARAMS,
          body: { definition: names.object, mediaTypes: BODY_TYPES },
          responses: { ...created, '202': { description: 'Accepted', definition: names.object } },
        }),
        ...(kind.deleteCollection === false
          ? []
          : [
              op('delete', 'delete', 'deletecollection', `delete collection of ${K}`, {
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
      parameters: [nameParam, ...scopeParams, P.pretty],
      operations: [
        op('get', 'read', 'get', `read the specified ${K}`),
        op('put', 'replace', 'put', `replace the specified ${K}`, { parameters: WRITE_PARAMS, body: { definition: names.object, mediaTypes: BODY_TYPES }, responses: created }),
        op('patch', 'patch', 'patch', `partially update the specified ${K}`, {
          parameters: PATCH_PARAMS,
          body: { definition: metaNames.patch, mediaTypes: patchTypes },
          responses: created,
        }),
        op('delete', 'delete', 'delete', `delete ${article(K)} ${K}`, {
          parameters: DELETE_PARAMS,
          body: { definition: metaNames.deleteOptions, mediaTypes: BODY_TYPES },
          responses: statusAnswer(['200', '202']),
        }),
      ],
    },
  ];
  if (kind.hasStatus) {
    paths.push({
      path: `${scoped}/${kind.plural}/{name}/status`,
      parameters: [nameParam, ...scopeParams, P.pretty],
      operations: [
        op('get', 'read', 'get', `read status of the specified ${K}`, { suffix: `${ns}${K}Status` }),
        op('put', 'replace', 'put', `replace status of the specified ${K}`, {
          suffix: `${ns}${K}Status`,
          parameters: WRITE_PARAMS,
          body: { definition: names.object, mediaTypes: BODY_TYPES },
          responses: created,
        }),
        op('patch', 'patch', 'patch', `partially update status of the specified ${K}`, {
          suffix: `${ns}${K}Status`,
          parameters: PATCH_PARAMS,
          body: { definition: metaNames.patch, mediaTypes: patchTypes },
          responses: created,
        }),
      ],
    });
  }
  if (kind.namespaced) {
    paths.push({ path: `${root}/${kind.plural}`, parameters: [P.pretty], operations: [list(`${K}ForAllNamespaces`, `list or watch objects of kind ${K}`)] });
    paths.push({
      path: `${root}/watch/${kind.plural}`,
      parameters: [...LIST_PARAMS, P.pretty],
      operations: [watch(`${K}ListForAllNamespaces`, 'watchlist', `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`)],
    });
  }
  paths.push(
    {
      path: `${watchScoped}/${kind.plural}`,
      parameters: [...scopeParams, ...LIST_PARAMS, P.pretty],
      operations: [watch(`${ns}${K}List`, 'watchlist', `watch individual changes to a list of ${K}. deprecated: use the 'watch' parameter with a list operation instead.`)],
    },
    {
      path: `${watchScoped}/${kind.plural}/{name}`,
      parameters: [nameParam, ...scopeParams, ...LIST_PARAMS, P.pretty],
      operations: [
        watch(
          `${ns}${K}`,
          'watch',
          `watch changes to an object of kind ${K}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
        ),
      ],
    },
  );
  return paths;
}

/** A discovery endpoint (GET only, no GVK), e.g. /apis/<group>/<version>/ → APIResourceList. */
export function discoveryPath(path: string, operationId: string, description: string, tag: string, definition: string): PathItem {
  return {
    path,
    parameters: [],
    operations: [{ method: 'get', operationId, description, tags: [tag], parameters: [], responses: { '200': { description: 'OK', definition } }, produces: ANSWER_TYPES }],
  };
}
