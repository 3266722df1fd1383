/**
 * ObjectMeta validation run for every kind (Kubernetes' apimachinery api/validation/objectmeta.go).
 * Errors carry paths under `metadata.`. On create, callers run validateObjectMeta; on update they run
 * validateObjectMeta for the shape and validateObjectMetaUpdate for the transition (immutable fields,
 * finalizers of an object being deleted), which does not repeat the shape checks.
 */
import { FieldPath, forbidden, invalid, required, tooLong, type FieldError } from '../api/field-errors.js';
import { byteLength, isObject, jsonEqual, listAt, numberAt, stringAt, stringsOf } from '../api/json-access.js';
import { validateLabels } from './labels.js';
import { checkName, isDNS1123Label, isQualifiedName, type NameFormat } from '../api/name-formats.js';
import type { ObjectMeta } from '../api/types.js';

export { listMetaSchema, objectMetaSchema } from './meta-schema.js';

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const FIELD_MANAGER_MAX_LENGTH = 128;
const SUBRESOURCE_MAX_LENGTH = 256;
export const FIELD_IMMUTABLE = 'field is immutable';

/** The finalizers Kubernetes itself defines; the only ones allowed without a domain on core kinds. */
export const STANDARD_FINALIZERS: readonly string[] = ['kubernetes', 'orphan', 'foregroundDeletion'];

const root = FieldPath.root('metadata');

/**
 * Metadata of a new object (name already generated, or generateName still pending); at another path
 * for the metadata of a resource embedded in a custom resource.
 */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, nameFormat: NameFormat = 'dns-subdomain', at: FieldPath = root): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = stringAt(meta, 'generateName');
  const name = stringAt(meta, 'name');
  if (generateName) errs.push(...checkName(nameFormat, generateName, true).map((m) => invalid(at.child('generateName'), generateName, m)));
  // A generateName alone is fine: the store completes the name before writing.
  if (!name) {
    if (!generateName) errs.push(required(at.child('name'), 'name or generateName is required'));
  } else {
    errs.push(...checkName(nameFormat, name, false).map((m) => invalid(at.child('name'), name, m)));
  }
  const namespace = stringAt(meta, 'namespace');
  if (namespaced) {
    if (!namespace) errs.push(required(at.child('namespace'), ''));
    else errs.push(...isDNS1123Label(namespace).map((m) => invalid(at.child('namespace'), namespace, m)));
  } else if (namespace) {
    errs.push(forbidden(at.child('namespace'), 'not allowed on this type'));
  }
  const generation = numberAt(meta, 'generation');
  if (generation !== undefined && generation < 0) errs.push(invalid(at.child('generation'), generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(meta.labels, at.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, at.child('annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences, at.child('ownerReferences')));
  errs.push(...validateFinalizers(listAt(meta, 'finalizers'), at.child('finalizers')));
  errs.push(...validateManagedFields(listAt(meta, 'managedFields'), at.child('managedFields')));
  return errs;
}

/** Annotation keys are qualified names whatever their case; keys plus values total at most 256 KiB. */
export function validateAnnotations(annotations: unknown, p: FieldPath): FieldError[] {
  if (!isObject(annotations)) return [];
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    errs.push(...isQualifiedName(k.toLowerCase()).map((m) => invalid(p, k, m)));
    size += byteLength(k) + (typeof v === 'string' ? byteLength(v) : 0);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(p, undefined, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** The group and version of "group/version" or "version"; an unparsable string has neither. */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return { group: '', version: '' };
}

/**
 * ownerReferences: apiVersion (with a version), kind, name and uid must be non-empty, core Events
 * cannot own anything, and at most one reference is the controller. Kubernetes reports the fields
 * without the list index (`metadata.ownerReferences.uid`).
 */
export function validateOwnerReferences(refs: unknown, p: FieldPath): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    const apiVersion = stringAt(ref, 'apiVersion');
    const kind = stringAt(ref, 'kind');
    const name = stringAt(ref, 'name');
    const gv = parseApiVersion(apiVersion);
    if (!gv.version) errs.push(invalid(p.child('apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) errs.push(invalid(p.child('kind'), kind, 'must not be empty'));
    if (!name) errs.push(invalid(p.child('name'), name, 'must not be empty'));
    if (!stringAt(ref, 'uid')) errs.push(invalid(p.child('uid'), stringAt(ref, 'uid'), 'must not be empty'));
    if (gv.group === '' && gv.version === 'v1' && kind === 'Event') errs.push(invalid(p, ref, '/v1, Kind=Event is disallowed from being an owner'));
    if (isObject(ref) && ref.controller === true) {
      const current = `${kind}/${name}`;
      if (firstController) {
        errs.push(invalid(p, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/** One finalizer name: a qualified name. */
export const validateFinalizerName = (name: string, p: FieldPath): FieldError[] => isQualifiedName(name).map((m) => invalid(p, name, m));

/**
 * Finalizers are qualified names, and orphan and foregroundDeletion exclude each other. Duplicates
 * are accepted, as Kubernetes accepts them (tightening that was declined upstream as breaking).
 */
export function validateFinalizers(finalizers: unknown[], p: FieldPath): FieldError[] {
  const names = stringsOf(finalizers);
  const errs = names.flatMap((f) => validateFinalizerName(f, p));
  if (names.includes('orphan') && names.includes('foregroundDeletion')) {
    errs.push(invalid(p, names, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/**
 * The stricter finalizer rule of the core kinds (Event, Namespace): a name without a '/' must be
 * one of Kubernetes' own. Kinds validated by core validation add this to the generic checks.
 */
export function validateStandardFinalizerNames(finalizers: unknown[], p: FieldPath): FieldError[] {
  return stringsOf(finalizers)
    .filter((f) => !f.includes('/') && !STANDARD_FINALIZERS.includes(f))
    .map((f) => invalid(p, f, 'name is neither a standard finalizer name nor is it fully qualified'));
}

/** The extra ObjectMeta rule of kinds Kubernetes validates with core validation (Event, Namespace). */
export const validateCoreObjectMeta = (meta: ObjectMeta): FieldError[] => validateStandardFinalizerNames(listAt(meta, 'finalizers'), root.child('finalizers'));

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** A field manager: at most 128 bytes, printable characters only (positions are byte offsets). */
export function validateFieldManager(manager: string, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(tooLong(p, manager, FIELD_MANAGER_MAX_LENGTH));
  let offset = 0;
  for (const ch of manager) {
    if (!printable.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalid(p, manager, `invalid character U+${code} (at position ${offset})`));
    }
    offset += byteLength(ch);
  }
  return errs;
}

export function validateManagedFields(entries: unknown[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  entries.forEach((e, i) => {
    const ep = p.index(i);
    const operation = stringAt(e, 'operation');
    if (operation !== 'Apply' && operation !== 'Update') errs.push(invalid(ep.child('operation'), operation, 'must be `Apply` or `Update`'));
    const fieldsType = stringAt(e, 'fieldsType');
    if (fieldsType && fieldsType !== 'FieldsV1') errs.push(invalid(ep.child('fieldsType'), fieldsType, 'must be `FieldsV1`'));
    errs.push(...validateFieldManager(stringAt(e, 'manager'), ep.child('manager')));
    const sub = stringAt(e, 'subresource');
    if (byteLength(sub) > SUBRESOURCE_MAX_LENGTH) errs.push(tooLong(ep.child('subresource'), sub, SUBRESOURCE_MAX_LENGTH));
  });
  return errs;
}

/** Invalid "field is immutable" when a field changed (absent and null count as the same). */
export function validateImmutableField(next: unknown, old: unknown, p: FieldPath): FieldError[] {
  const norm = (v: unknown) => (v === null ? undefined : v);
  return jsonEqual(norm(next), norm(old)) ? [] : [invalid(p, next, FIELD_IMMUTABLE)];
}

/**
 * The transition rules of an update: identity and lifecycle fields are immutable, generation never
 * goes back, and an object being deleted gains no finalizers. (resourceVersion is the store's
 * business: it fills it for unconditional updates before any check runs.)
 */
export function validateObjectMetaUpdate(next: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (old.deletionTimestamp) {
    const before = new Set(stringsOf(listAt(old, 'finalizers')));
    const added = [...new Set(stringsOf(listAt(next, 'finalizers')).filter((f) => !before.has(f)))].sort();
    if (added.length) {
      const goList = `[]string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
      errs.push(forbidden(root.child('finalizers'), `no new finalizers can be added if the object is being deleted, found new finalizers ${goList}`));
    }
  }
  const nextGen = numberAt(next, 'generation') ?? 0;
  if (nextGen < (numberAt(old, 'generation') ?? 0)) errs.push(invalid(root.child('generation'), nextGen, 'must not be decremented'));
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    // Go compares zero values: an absent string and '' are the same.
    const zero = f === 'deletionTimestamp' || f === 'deletionGracePeriodSeconds' ? undefined : '';
    errs.push(...validateImmutableField(next[f] ?? zero, old[f] ?? zero, root.child(f)));
  }
  return errs;
}
