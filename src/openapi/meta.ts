/**
 * Schemas of the protocol types OpenAPI operations name besides the kinds themselves: Status,
 * DeleteOptions, Patch, WatchEvent and the discovery documents. Published under io.orch.* names like
 * every other definition (kubectl finds schemas by x-kubernetes-group-version-kind, not by name).
 * ObjectMeta and ListMeta come from the resources room, which owns the metadata schemas.
 */
import { listMetaSchema, objectMetaSchema } from '../resources/meta-schema.js';
import { arrayOf, atomicList, bool, int, obj, str, type Schema } from '../api/schema.js';

/** io.orch.apimachinery.pkg.apis.meta.v1, read off ObjectMeta so the two rooms cannot disagree. */
const META = (objectMetaSchema.refName ?? 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta').replace(/\.ObjectMeta$/, '');
const APIMACHINERY = META.replace(/\.apis\.meta\.v1$/, '');

const apiVersion = str('Versioned schema of this representation; the server converts recognized versions.');
const kind = str('REST resource this object represents, in CamelCase.');

const statusCause = obj(
  `${META}.StatusCause`,
  {
    field: str('Field of the resource that caused the error, as a JSON path (e.g. "spec.rules[0].name").'),
    message: str('Human-readable description of the cause.'),
    reason: str('Machine-readable description of the cause; empty when unknown.'),
  },
  { description: 'One cause of an error.' },
);

const statusDetails = obj(
  `${META}.StatusDetails`,
  {
    causes: atomicList(statusCause, 'The causes of the error, when known.'),
    group: str('Group of the resource the status is about.'),
    kind: str('Kind of the resource the status is about.'),
    name: str('Name of the resource the status is about, when there is one.'),
    retryAfterSeconds: int('Seconds to wait before retrying the operation.'),
    uid: str('UID of the resource the status is about.'),
  },
  { description: 'Extended data of a Status; reason decides which fields are set.' },
);

export const statusSchema = obj(
  `${META}.Status`,
  {
    apiVersion,
    code: int('HTTP status code of the answer; 0 when not set.'),
    details: statusDetails,
    kind,
    message: str('Human-readable description of the status.'),
    metadata: listMetaSchema,
    reason: str('Machine-readable CamelCase reason of a Failure (NotFound, Conflict, Invalid, …).'),
    status: str('"Success" or "Failure".'),
  },
  { description: 'The answer of operations that return no object, and of every error.' },
);

const preconditions = obj(
  `${META}.Preconditions`,
  { resourceVersion: str('The object must have this resourceVersion.'), uid: str('The object must have this UID.') },
  { description: 'Conditions that must hold before an operation runs.' },
);

export const deleteOptionsSchema = obj(
  `${META}.DeleteOptions`,
  {
    apiVersion,
    dryRun: atomicList(str(), '"All" runs every stage of the deletion without persisting it.'),
    gracePeriodSeconds: int('Seconds before the object is deleted; 0 deletes at once.', 'int64'),
    ignoreStoreReadErrorWithClusterBreakingPotential: bool('Deletes an object whose stored data cannot be read. Use with care.'),
    kind,
    orphanDependents: bool('Deprecated: use propagationPolicy. Whether dependents are orphaned.'),
    preconditions,
    propagationPolicy: str('Orphan, Background or Foreground: what happens to dependents.'),
  },
  { description: 'Options of a delete request.' },
);

export const patchSchema: Schema = {
  type: 'object',
  refName: `${META}.Patch`,
  description: 'The body of a PATCH request: a JSON patch, merge patch, strategic merge patch or apply configuration, as its Content-Type says.',
};

const rawExtension: Schema = {
  type: 'object',
  refName: `${APIMACHINERY}.runtime.RawExtension`,
  description: 'An embedded object in any serialization.',
};

export const watchEventSchema = obj(
  `${META}.WatchEvent`,
  {
    object: { ...rawExtension, description: 'The object (ADDED, MODIFIED, DELETED), a Status (ERROR), or an object carrying only a resourceVersion (BOOKMARK).' },
    type: str('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'),
  },
  { required: ['type', 'object'], description: 'One event of a watch stream.' },
);

const apiResource = obj(
  `${META}.APIResource`,
  {
    categories: atomicList(str(), 'Groups of resources this one belongs to (e.g. "all").'),
    group: str('Preferred group of the resource, when it differs from the list.'),
    kind: str('Kind of the resource.'),
    name: str('Plural name of the resource.'),
    namespaced: bool('Whether the resource is namespaced.'),
    shortNames: atomicList(str(), 'Suggested short names of the resource.'),
    singularName: str('Singular name of the resource.'),
    storageVersionHash: str('Opaque hash of the storage version; compare for equality only.'),
    verbs: arrayOf(str(), { description: 'Supported verbs (get, list, watch, create, update, patch, delete, deletecollection).' }),
    version: str('Preferred version of the resource, when it differs from the list.'),
  },
  { required: ['name', 'singularName', 'namespaced', 'kind', 'verbs'], description: 'A resource and whether it is namespaced.' },
);

export const apiResourceListSchema = obj(
  `${META}.APIResourceList`,
  { apiVersion, groupVersion: str('The group and version of these resources.'), kind, resources: atomicList(apiResource, 'The resources of the group-version.') },
  { required: ['groupVersion', 'resources'], description: 'The resources served at one group-version.' },
);

const serverAddressByClientCIDR = obj(
  `${META}.ServerAddressByClientCIDR`,
  { clientCIDR: str('CIDR of the clients this address is for.'), serverAddress: str('Address of the server for those clients: host, host:port, IP or IP:port.') },
  { required: ['clientCIDR', 'serverAddress'], description: 'Which server address clients in a network should use.' },
);

export const apiVersionsSchema = obj(
  `${META}.APIVersions`,
  {
    apiVersion,
    kind,
    serverAddressByClientCIDRs: atomicList(serverAddressByClientCIDR, 'Server addresses by client network.'),
    versions: atomicList(str(), 'Versions of the core group.'),
  },
  { required: ['versions', 'serverAddressByClientCIDRs'], description: 'The versions of the core group, at /api.' },
);

const groupVersionForDiscovery = obj(
  `${META}.GroupVersionForDiscovery`,
  { groupVersion: str('"group/version".'), version: str('The version alone.') },
  { required: ['groupVersion', 'version'], description: 'One version of a group.' },
);

export const apiGroupSchema = obj(
  `${META}.APIGroup`,
  {
    apiVersion,
    kind,
    name: str('Name of the group.'),
    preferredVersion: { ...groupVersionForDiscovery, description: 'The version clients should use.' },
    serverAddressByClientCIDRs: atomicList(serverAddressByClientCIDR, 'Server addresses by client network.'),
    versions: atomicList(groupVersionForDiscovery, 'Versions of the group.'),
  },
  { required: ['name', 'versions'], description: 'A group, its versions and the preferred one.' },
);

export const apiGroupListSchema = obj(
  `${META}.APIGroupList`,
  { apiVersion, groups: atomicList(apiGroupSchema, 'The groups.'), kind },
  { required: ['groups'], description: 'The named groups, at /apis.' },
);

export const versionInfoSchema = obj(
  `${APIMACHINERY}.version.Info`,
  Object.fromEntries(
    [
      'buildDate',
      'compiler',
      'emulationMajor',
      'emulationMinor',
      'gitCommit',
      'gitTreeState',
      'gitVersion',
      'goVersion',
      'major',
      'minCompatibilityMajor',
      'minCompatibilityMinor',
      'minor',
      'platform',
    ].map((f) => [f, str()]),
  ),
  { required: ['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'], description: 'Version of the server.' },
);

/** Definition names of the meta types, for refs from operations. */
export const metaNames = {
  listMeta: listMetaSchema.refName as string,
  status: statusSchema.refName as string,
  deleteOptions: deleteOptionsSchema.refName as string,
  patch: patchSchema.refName as string,
  watchEvent: watchEventSchema.refName as string,
  apiResourceList: apiResourceListSchema.refName as string,
  apiVersions: apiVersionsSchema.refName as string,
  apiGroup: apiGroupSchema.refName as string,
  apiGroupList: apiGroupListSchema.refName as string,
  versionInfo: versionInfoSchema.refName as string,
};

/** GVKs of the meta kinds, which Kubernetes publishes on their definitions. */
export const metaGroupVersionKinds: Record<string, { group: string; version: string; kind: string }[]> = {
  [metaNames.status]: [{ group: '', version: 'v1', kind: 'Status' }],
  [metaNames.apiResourceList]: [{ group: '', version: 'v1', kind: 'APIResourceList' }],
  [metaNames.apiVersions]: [{ group: '', version: 'v1', kind: 'APIVersions' }],
  [metaNames.apiGroup]: [{ group: '', version: 'v1', kind: 'APIGroup' }],
  [metaNames.apiGroupList]: [{ group: '', version: 'v1', kind: 'APIGroupList' }],
};
