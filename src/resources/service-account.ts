/**
 * ServiceAccount (core v1): an identity for processes, with the secrets and image pull secrets it
 * may use. Kubernetes validates only its metadata (ValidateServiceAccount).
 */
import { kindSchema } from './kind-schema.js';
import { validateCoreObjectMeta } from './metadata.js';
import { arrayOf, bool, mergeList, obj, str } from '../api/schema.js';
import { CORE_V1, objectReferenceSchema } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import { listAt } from '../api/json-access.js';

const localObjectReference = obj(
  `${CORE_V1}.LocalObjectReference`,
  { name: str('Name of the referent.') },
  { 'x-kubernetes-map-type': 'atomic', description: 'A reference to an object in the same namespace.' },
);

const schema = kindSchema(`${CORE_V1}.ServiceAccount`, 'An identity for processes that run in a pod.', {
  automountServiceAccountToken: bool('Whether pods running as this service account should have an API token mounted automatically.'),
  imagePullSecrets: arrayOf(localObjectReference, { description: 'Secrets in the same namespace to use for pulling images.', 'x-kubernetes-list-type': 'atomic' }),
  secrets: mergeList(objectReferenceSchema, 'name', 'Secrets in the same namespace that pods running as this service account may use.'),
});

export const serviceAccount = {
  group: '',
  versions: ['v1'],
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  hasStatus: false,
  schema,
  applyDefaults() {},
  validate: (o) => validateCoreObjectMeta(o.metadata),
  tableColumns: [{ name: 'Secrets', type: 'integer', description: 'Number of secrets.', priority: 0, cell: (o) => listAt(o, 'secrets').length }],
} satisfies KindStrategy;
