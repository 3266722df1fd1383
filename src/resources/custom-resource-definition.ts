/**
 * CustomResourceDefinition (apiextensions.orch.io/v1): a kind defined at run time. Writing one is
 * checked whole (crd/validate-crd.ts: names, versions, structural schemas, CEL rules and their
 * cost), so a bad CRD is one 422 with every error and nothing of it is served. Serving it is the
 * custom-resources controller's: it accepts the names, defines the kind (crd/custom-kind.ts) in the
 * server's KindCatalog and marks the CRD Established; a deleted CRD's objects go before it does.
 */
import { crdSchema, CRD_GROUP } from './crd/crd-schema.js';
import { validateCrdCreate, validateCrdUpdate, validateNames } from './crd/validate-crd.js';
import { FieldPath } from '../api/field-errors.js';
import { defaultField, isObject, listAt, objectAt, stringAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { CRD_CLEANUP_FINALIZER } from '../api/served-kinds.js';

/** Whether the CRD's condition of this type is True. */
export const crdCondition = (crd: KubeObject, type: string): boolean => listAt(objectAt(crd, 'status'), 'conditions').some((c) => stringAt(c, 'type') === type && stringAt(c, 'status') === 'True');

/** The storage version's name, when exactly one is marked. */
const storageVersion = (crd: KubeObject): string | undefined => {
  const storage = listAt(objectAt(crd, 'spec'), 'versions').filter((v) => isObject(v) && v.storage === true);
  return storage.length === 1 ? stringAt(storage[0], 'name') : undefined;
};

/** v1's defaults: conversion None, singular the kind in lowercase, listKind <kind>List. */
function applyDefaults(crd: KubeObject): void {
  const spec = objectAt(crd, 'spec');
  if (!spec) return;
  defaultField(spec, 'conversion', { strategy: 'None' });
  const names = objectAt(spec, 'names');
  const kind = stringAt(names, 'kind');
  if (names && kind) {
    defaultField(names, 'singular', kind.toLowerCase());
    defaultField(names, 'listKind', `${kind}List`);
  }
}

/** A new CRD starts with no conditions, its storage version stored. */
function prepareForCreate(crd: KubeObject): void {
  const stored = storageVersion(crd);
  crd.status = { storedVersions: stored ? [stored] : [] };
}

/** A new storage version joins the stored ones (until a migration removes the old). */
function prepareForUpdate(crd: KubeObject): void {
  const stored = storageVersion(crd);
  if (!stored) return;
  const status = isObject(crd.status) ? crd.status : (crd.status = {});
  const list = listAt(status, 'storedVersions').map(String);
  if (!list.includes(stored)) status.storedVersions = [...list, stored];
}

export const customResourceDefinition = {
  group: CRD_GROUP,
  versions: ['v1'],
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: true,
  schema: crdSchema,
  deleteFinalizers: [CRD_CLEANUP_FINALIZER],
  applyDefaults,
  prepareForCreate,
  prepareForUpdate,
  validate: validateCrdCreate,
  validateUpdate: (crd, old) => validateCrdUpdate(crd, old, crdCondition(old, 'Established')),
  validateStatusUpdate: (crd) => validateNames(objectAt(objectAt(crd, 'status'), 'acceptedNames'), FieldPath.root('status').child('acceptedNames'), false),
  tableColumns: [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: 'Name must be unique within a namespace.',
      priority: 0,
      cell: (o) => o.metadata.name ?? '',
    },
    { name: 'Created At', type: 'date', description: 'The time the CustomResourceDefinition was created.', priority: 0, cell: (o) => o.metadata.creationTimestamp ?? '' },
  ],
  tableIncludesName: true,
  allowUnconditionalUpdate: false,
} satisfies KindStrategy;
