/**
 * Namespace (core v1): the scope of namespaced names. Its name is a DNS label, it is Active until
 * deleted and Terminating after, and its spec.finalizers are only changed through /finalize in
 * Kubernetes, so a main-resource update keeps the stored ones.
 *
 * As Kubernetes, a create adds the "kubernetes" finalizer to spec.finalizers: a deleted namespace
 * stays Terminating until the namespace controller (controllers/namespace-cleanup.ts) has emptied it
 * and removed that finalizer through /finalize; then it goes.
 */
import { FieldPath, invalid, type FieldError } from '../api/field-errors.js';
import { cloneJson, defaultField, isObject, listAt, objectAt, stringAt, type JsonObject } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { timeSchema } from './meta-schema.js';
import { validateCoreObjectMeta, validateFinalizerName, validateStandardFinalizerNames } from './metadata.js';
import { atomicList, obj, str } from '../api/schema.js';
import { CORE_V1 } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

export const NAMESPACE_PHASES = ['Active', 'Terminating'] as const;
/** The namespaces Kubernetes' NamespaceLifecycle admission never lets go (kube-node-lease may go). */
export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];
/** The finalizer of the namespace controller, which it removes once the namespace is empty. */
export const KUBERNETES_FINALIZER = 'kubernetes';
/** The label every namespace carries with its own name, so selectors can pick namespaces by name. */
export const METADATA_NAME_LABEL = 'kubernetes.io/metadata.name';

const conditionSchema = obj(
  `${CORE_V1}.NamespaceCondition`,
  {
    lastTransitionTime: timeSchema,
    message: str('Human-readable details of the transition.'),
    reason: str('CamelCase reason of the last transition.'),
    status: str('True, False or Unknown.'),
    type: str('Type of namespace condition.'),
  },
  { required: ['type', 'status'], description: 'One aspect of the state of a namespace.' },
);

const schema = kindSchema(`${CORE_V1}.Namespace`, 'A scope for names; a cluster can hold many namespaces.', {
  spec: obj(
    `${CORE_V1}.NamespaceSpec`,
    { finalizers: atomicList(str(), 'Finalizers that must be cleared before the namespace is removed from storage.') },
    { description: 'Desired state of a namespace.' },
  ),
  status: obj(
    `${CORE_V1}.NamespaceStatus`,
    {
      conditions: {
        type: 'array',
        items: conditionSchema,
        description: 'Latest observations of the namespace state.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'type',
      },
      phase: str('Active, or Terminating once deletion was requested.', { enum: [...NAMESPACE_PHASES] }),
    },
    { description: 'Observed state of a namespace.' },
  ),
});

/** spec.finalizers: qualified names, and a name without a domain must be a standard one. */
function validate(o: KubeObject): FieldError[] {
  const path = FieldPath.root('spec').child('finalizers');
  const specFinalizers = listAt(objectAt(o, 'spec'), 'finalizers');
  return [
    ...validateCoreObjectMeta(o.metadata),
    ...specFinalizers.flatMap((f) => validateFinalizerName(typeof f === 'string' ? f : '', path)),
    ...validateStandardFinalizerNames(specFinalizers, path),
  ];
}

/** status.phase must say whether deletion was requested. Kubernetes names the path `status.Phase`. */
function validateStatusUpdate(o: KubeObject): FieldError[] {
  const phase = stringAt(objectAt(o, 'status'), 'phase');
  const path = FieldPath.root('status').child('Phase');
  if (!o.metadata.deletionTimestamp) return phase === 'Active' ? [] : [invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  return phase === 'Terminating' ? [] : [invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
}

export const namespace = {
  group: '',
  versions: ['v1'],
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  nameFormat: 'dns-label',
  deleteCollection: false,
  hasStatus: true,
  schema,
  applyDefaults(o) {
    const status: JsonObject = isObject(o.status) ? o.status : (o.status = {});
    defaultField(status, 'phase', 'Active');
    if (o.metadata.name) o.metadata.labels = { ...(o.metadata.labels ?? {}), [METADATA_NAME_LABEL]: o.metadata.name };
  },
  prepareForCreate(o) {
    o.status = { phase: 'Active' };
    const spec: JsonObject = isObject(o.spec) ? o.spec : (o.spec = {});
    const finalizers = listAt(spec, 'finalizers');
    if (!finalizers.includes(KUBERNETES_FINALIZER)) spec.finalizers = [...finalizers, KUBERNETES_FINALIZER];
  },
  specFinalizers: (o) => listAt(objectAt(o, 'spec'), 'finalizers').filter((f): f is string => typeof f === 'string'),
  finalizeUpdate(o, old) {
    const next = cloneJson(old);
    const finalizers = objectAt(o, 'spec')?.finalizers;
    const spec: JsonObject = isObject(next.spec) ? next.spec : (next.spec = {});
    if (finalizers === undefined) delete spec.finalizers;
    else spec.finalizers = cloneJson(finalizers);
    return next;
  },
  prepareForUpdate(o, old) {
    const spec: JsonObject = isObject(o.spec) ? o.spec : (o.spec = {});
    const finalizers = objectAt(old, 'spec')?.finalizers;
    if (finalizers === undefined) delete spec.finalizers;
    else spec.finalizers = cloneJson(finalizers);
    // No spec before and none now: an empty one would read as a spec change (and bump generation).
    if (old.spec === undefined && Object.keys(spec).length === 0) delete o.spec;
    if (old.status === undefined) delete o.status;
    else o.status = cloneJson(old.status);
  },
  // On update prepareForUpdate restores the stored spec.finalizers, which then pass again: the create
  // rules can run unchanged, and still guard a caller that skips prepareForUpdate.
  refuseDelete: (o) => (IMMORTAL_NAMESPACES.includes(o.metadata.name ?? '') ? 'this namespace may not be deleted' : undefined),
  prepareForDelete(o) {
    // Kubernetes' namespace delete writes the phase with the deletion mark, in the same update.
    o.status = { ...(isObject(o.status) ? o.status : {}), phase: 'Terminating' };
  },
  validate,
  validateStatusUpdate,
  tableColumns: [{ name: 'Status', type: 'string', description: 'The status of the namespace.', priority: 0, cell: (o) => stringAt(objectAt(o, 'status'), 'phase') }],
  fieldSelectors: {
    'status.phase': (o) => stringAt(objectAt(o, 'status'), 'phase'),
    // Kept by Kubernetes for old clients that select namespaces by "name".
    name: (o) => o.metadata.name ?? '',
  },
} satisfies KindStrategy;
