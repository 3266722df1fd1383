/**
 * Schemas of the meta/v1 types every kind embeds (ObjectMeta, ListMeta, LabelSelector, Condition,
 * Time, …), with Kubernetes' list types and patch strategies, published under io.orch.* names.
 */
import { arrayOf, atomicList, bool, int, mergeList, obj, str, strMap, type Schema } from '../api/schema.js';

const META = 'io.orch.apimachinery.pkg.apis.meta.v1';

export const timeSchema: Schema = { type: 'string', format: 'date-time', refName: `${META}.Time`, description: 'RFC 3339 timestamp with second precision.' };
export const microTimeSchema: Schema = {
  type: 'string',
  format: 'date-time',
  refName: `${META}.MicroTime`,
  description: 'RFC 3339 timestamp with microsecond precision.',
};

export const ownerReferenceSchema = obj(
  `${META}.OwnerReference`,
  {
    apiVersion: str('API version of the owner.'),
    blockOwnerDeletion: bool('If true, the owner cannot be deleted in the foreground until this reference is removed.'),
    controller: bool('If true, this reference points to the managing controller. At most one owner may be the controller.'),
    kind: str('Kind of the owner.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner.'),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], 'x-kubernetes-map-type': 'atomic', description: 'Identifies an owning object in the same namespace.' },
);

/** FieldsV1 is an opaque trie of field paths: nothing below it is checked. */
const fieldsV1Schema: Schema = {
  type: 'object',
  refName: `${META}.FieldsV1`,
  description: 'Set of fields in the JSON trie format of server-side apply.',
  'x-kubernetes-preserve-unknown-fields': true,
};

export const managedFieldsEntrySchema = obj(
  `${META}.ManagedFieldsEntry`,
  {
    apiVersion: str('Version of the resource this entry applies to.'),
    fieldsType: str('Format of fieldsV1; only "FieldsV1".'),
    fieldsV1: fieldsV1Schema,
    manager: str('Identifier of the workflow managing these fields.'),
    operation: str('Operation that created this entry: Apply or Update.'),
    subresource: str('Subresource the operation was on, empty for the main resource.'),
    time: timeSchema,
  },
  { description: 'A field set owned by one manager.' },
);

export const objectMetaSchema = obj(
  `${META}.ObjectMeta`,
  {
    annotations: strMap('Unstructured key/value data for tools; keys are qualified names, total size at most 256 KiB.'),
    creationTimestamp: timeSchema,
    deletionGracePeriodSeconds: int('Seconds allowed for graceful termination once deletion was requested.', 'int64'),
    deletionTimestamp: timeSchema,
    finalizers: {
      ...arrayOf(str()),
      description: 'Conditions that must be cleared before the object is removed from storage.',
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    },
    generateName: str('Prefix of a server-generated name, used when name is empty.'),
    generation: int('Sequence number of the desired state, incremented by the system.', 'int64'),
    labels: strMap('Key/value pairs used to select objects.'),
    managedFields: atomicList(managedFieldsEntrySchema, 'Which manager owns which fields (server-side apply).'),
    name: str('Name, unique within a namespace.'),
    namespace: str('Namespace of the object; empty for cluster-scoped kinds.'),
    ownerReferences: mergeList(ownerReferenceSchema, 'uid', 'Objects this one depends on.'),
    resourceVersion: str('Opaque version of the object, for optimistic concurrency and watches.'),
    selfLink: str('Deprecated; never set.'),
    uid: str('Unique identifier in time and space, set by the server.'),
  },
  { description: 'Metadata every persisted object has.' },
);

export const listMetaSchema = obj(
  `${META}.ListMeta`,
  {
    continue: str('Token to request the next page of a limited list.'),
    remainingItemCount: int('Number of items after this page, when known.', 'int64'),
    resourceVersion: str('Version of the list, for watches from this point.'),
    selfLink: str('Deprecated; never set.'),
    shardInfo: obj(`${META}.ShardInfo`, { selector: str('Shard selector of the request, echoed back.') }, { required: ['selector'], description: 'The shard a list answered.' }),
  },
  { description: 'Metadata of a list.' },
);

export const labelSelectorRequirementSchema = obj(
  `${META}.LabelSelectorRequirement`,
  {
    key: str('Label key the requirement applies to.'),
    operator: str('In, NotIn, Exists or DoesNotExist.'),
    values: atomicList(str(), 'Values for In and NotIn; empty for Exists and DoesNotExist.'),
  },
  { required: ['key', 'operator'], description: 'One requirement of a label selector.' },
);

export const labelSelectorSchema = obj(
  `${META}.LabelSelector`,
  {
    matchExpressions: atomicList(labelSelectorRequirementSchema, 'Requirements, ANDed.'),
    matchLabels: strMap('Exact-match labels, ANDed with matchExpressions.'),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'Selects objects by label; an empty selector matches everything.' },
);

export const conditionSchema = obj(
  `${META}.Condition`,
  {
    lastTransitionTime: timeSchema,
    message: str('Human-readable details of the transition.'),
    observedGeneration: int('Generation the condition was set for.', 'int64'),
    reason: str('CamelCase machine-readable reason of the last transition.'),
    status: str('True, False or Unknown.'),
    type: str('Type of condition, a qualified name.'),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'], description: 'One aspect of the current state.' },
);

/** Conditions as a map list keyed by type, the way status.conditions is declared. */
export const conditionsSchema = (description: string): Schema => ({
  ...arrayOf(conditionSchema),
  description,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});
