/**
 * A CustomResourceDefinition (v1) checked as kube-apiserver checks one: its name is
 * `<plural>.<group>`, the group a domain, the names DNS labels, exactly one storage version among
 * uniquely named versions, each version's schema structural and its rules compiling within their
 * cost (validate-schema.ts), its subresources, printer columns and selectable fields sound. Every
 * error comes back at once, so a bad CRD is one 422 and nothing of it is served.
 */
import { isDNS1035Label, isDNS1123Subdomain } from '../../api/name-formats.js';
import { FieldPath, duplicate, forbidden, invalid, notSupported, required, tooMany, type FieldError } from '../../api/field-errors.js';
import { isObject, jsonEqual, listAt, objectAt, stringAt, type JsonObject } from '../../api/json-access.js';
import { validateImmutableField } from '../metadata.js';
import type { Schema } from '../../api/schema.js';
import type { KubeObject } from '../../api/types.js';
import { validateApiApproval } from './api-approval.js';
import { parseRuleFieldPath } from './rule-field-path.js';
import { validateVersionSchema } from './validate-schema.js';

const spec = FieldPath.root('spec');
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const MAX_SELECTABLE_FIELDS = 8;

/**
 * Every error of a new CRD (metadata's generic checks run besides). `unchanged`: versions whose
 * schema an update leaves as it was, where a rule over the per-expression cost limit is not refused
 * (kube-apiserver's suppressPerExpressionCost: a CRD it once accepted stays updatable).
 */
export function validateCrd(crd: KubeObject, unchanged: ReadonlySet<string> = new Set()): FieldError[] {
  const s = objectAt(crd, 'spec') ?? {};
  const errs: FieldError[] = [];
  const wanted = `${stringAt(objectAt(s, 'names'), 'plural')}.${stringAt(s, 'group')}`;
  if (crd.metadata.name !== undefined && crd.metadata.name !== wanted) errs.push(invalid(FieldPath.root('metadata').child('name'), crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  errs.push(...validateGroup(stringAt(s, 'group')));
  const scope = stringAt(s, 'scope');
  if (!scope) errs.push(required(spec.child('scope'), ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(notSupported(spec.child('scope'), scope, ['Cluster', 'Namespaced']));
  if (s.preserveUnknownFields === true) {
    errs.push(invalid(spec.child('preserveUnknownFields'), true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  errs.push(...validateVersions(listAt(s, 'versions'), unchanged));
  errs.push(...validateNames(objectAt(s, 'names'), spec.child('names'), true));
  errs.push(...validateConversion(objectAt(s, 'conversion')));
  return errs;
}

/** A create: validateCrd, and the API approval of a protected group. */
export function validateCrdCreate(crd: KubeObject): FieldError[] {
  return [...validateCrd(crd), ...validateApiApproval(crd)];
}

/** An update: a valid CRD whose group and plural stay, and whose scope and kind stay once it is served. */
export function validateCrdUpdate(crd: KubeObject, old: KubeObject, established: boolean): FieldError[] {
  const s = objectAt(crd, 'spec');
  const o = objectAt(old, 'spec');
  const errs = [...validateCrd(crd, versionsWithUnchangedSchemas(crd, old)), ...validateApiApproval(crd, old)];
  if (established) {
    errs.push(...validateImmutableField(stringAt(s, 'scope'), stringAt(o, 'scope'), spec.child('scope')));
    errs.push(...validateImmutableField(stringAt(objectAt(s, 'names'), 'kind'), stringAt(objectAt(o, 'names'), 'kind'), spec.child('names', 'kind')));
  }
  errs.push(...validateImmutableField(stringAt(s, 'group'), stringAt(o, 'group'), spec.child('group')));
  errs.push(...validateImmutableField(stringAt(objectAt(s, 'names'), 'plural'), stringAt(objectAt(o, 'names'), 'plural'), spec.child('names', 'plural')));
  errs.push(...validateStoredVersions(crd));
  return errs;
}

/** The versions of an update whose schema is the same as the old CRD's version of that name (findVersionsWithUnchangedSchemas). */
function versionsWithUnchangedSchemas(crd: KubeObject, old: KubeObject): Set<string> {
  const schemaOf = (c: KubeObject, name: string) =>
    objectAt(
      listAt(objectAt(c, 'spec'), 'versions').find((v): v is JsonObject => isObject(v) && v.name === name),
      'schema',
    );
  const out = new Set<string>();
  for (const v of listAt(objectAt(crd, 'spec'), 'versions')) {
    if (!isObject(v) || typeof v.name !== 'string') continue;
    const mine = schemaOf(crd, v.name);
    const theirs = schemaOf(old, v.name);
    if (mine !== undefined && theirs !== undefined && jsonEqual(mine, theirs)) out.add(v.name);
  }
  return out;
}

/** status.storedVersions: the storage version, and no version that left spec.versions. */
export function validateStoredVersions(crd: KubeObject): FieldError[] {
  const p = FieldPath.root('status').child('storedVersions');
  const stored = listAt(objectAt(crd, 'status'), 'storedVersions').map(String);
  if (stored.length === 0) return [invalid(p, stored, 'must have at least one stored version')];
  const versions = listAt(objectAt(crd, 'spec'), 'versions');
  const errs: FieldError[] = [];
  for (const v of versions) if (isObject(v) && v.storage === true && !stored.includes(stringAt(v, 'name'))) errs.push(invalid(p, stored, `must have the storage version ${stringAt(v, 'name')}`));
  stored.forEach((name, i) => {
    if (!versions.some((v) => stringAt(v, 'name') === name)) {
      errs.push(
        invalid(
          p.index(i),
          name,
          `missing from spec.versions; ${name} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${name} and removes ${name} from status.storedVersions`,
        ),
      );
    }
  });
  return errs;
}

function validateGroup(group: string): FieldError[] {
  const p = spec.child('group');
  if (!group) return [required(p, '')];
  const why = isDNS1123Subdomain(group);
  if (why.length > 0) return [invalid(p, group, why.join(','))];
  return group.split('.').length < 2 ? [invalid(p, group, 'should be a domain with at least one dot')] : [];
}

/** spec.names (and status.acceptedNames, which may be empty): DNS labels, kind and listKind distinct. */
export function validateNames(names: JsonObject | undefined, p: FieldPath, isSpec: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (isSpec) for (const f of ['plural', 'singular', 'kind', 'listKind']) if (!stringAt(names, f)) errs.push(required(p.child(f), ''));
  for (const f of ['plural', 'singular'] as const) {
    const v = stringAt(names, f);
    const why = v ? isDNS1035Label(v) : [];
    if (why.length > 0) errs.push(invalid(p.child(f), v, why.join(',')));
  }
  for (const f of ['kind', 'listKind'] as const) {
    const v = stringAt(names, f);
    const why = v ? isDNS1035Label(v.toLowerCase()) : [];
    if (why.length > 0) errs.push(invalid(p.child(f), v, `may have mixed case, but should otherwise match: ${why.join(',')}`));
  }
  for (const f of ['shortNames', 'categories'] as const) {
    listAt(names, f).forEach((v, i) => {
      const why = isDNS1035Label(String(v));
      if (why.length > 0) errs.push(invalid(p.child(f).index(i), v, why.join(',')));
    });
  }
  const kind = stringAt(names, 'kind');
  if (kind && kind === stringAt(names, 'listKind')) errs.push(invalid(p.child('listKind'), kind, 'kind and listKind may not be the same'));
  return errs;
}

function validateVersions(versions: unknown[], unchanged: ReadonlySet<string>): FieldError[] {
  const p = spec.child('versions');
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    const vp = p.index(i);
    if (!isObject(v)) return;
    const name = stringAt(v, 'name');
    if (v.storage === true) storage++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const why = isDNS1035Label(name);
    if (why.length > 0) errs.push(invalid(vp.child('name'), name, why.join(',')));
    errs.push(...validateVersion(v, vp, unchanged.has(name)));
  });
  if (!unique) errs.push(invalid(p, versions, 'must contain unique version names'));
  if (storage !== 1) errs.push(invalid(p, versions, 'must have exactly one version marked as storage version'));
  return errs;
}

function validateVersion(v: JsonObject, p: FieldPath, schemaUnchanged: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const warning = v.deprecationWarning;
  if (typeof warning === 'string') {
    if (v.deprecated !== true) errs.push(invalid(p.child('deprecationWarning'), warning, 'can only be set for deprecated versions'));
    if (warning.length > 256) errs.push(invalid(p.child('deprecationWarning'), warning, 'must be <= 256 characters long'));
    if (warning.length === 0) errs.push(invalid(p.child('deprecationWarning'), warning, 'must not be an empty string'));
  }
  const subresources = objectAt(v, 'subresources');
  const schema = objectAt(objectAt(v, 'schema'), 'openAPIV3Schema');
  if (!schema) errs.push(required(p.child('schema', 'openAPIV3Schema'), ''));
  else errs.push(...validateVersionSchema(schema, p.child('schema', 'openAPIV3Schema'), isObject(subresources?.status), schemaUnchanged));
  errs.push(...validateScale(objectAt(subresources, 'scale'), p.child('subresources')));
  listAt(v, 'additionalPrinterColumns').forEach((c, i) => errs.push(...validateColumn(c, p.child('additionalPrinterColumns').index(i))));
  errs.push(...validateSelectableFields(listAt(v, 'selectableFields'), schema as Schema | undefined, p.child('selectableFields')));
  return errs;
}

/** A simple JSON path: `.a.b`, starting with a dot (kube's validateSimpleJSONPath). */
function simplePathErrors(path: string, p: FieldPath): FieldError[] {
  if (path.length === 0) return [invalid(p, path, 'must not be empty')];
  if (path[0] !== '.') return [invalid(p, path, 'must be a simple json path starting with .')];
  return [];
}

function validateScale(scale: JsonObject | undefined, p: FieldPath): FieldError[] {
  if (!scale) return [];
  const errs: FieldError[] = [];
  for (const [field, under] of [
    ['specReplicasPath', '.spec.'],
    ['statusReplicasPath', '.status.'],
  ] as const) {
    const path = stringAt(scale, field);
    const fp = p.child(`scale.${field}`);
    if (!path) errs.push(required(fp, ''));
    else {
      const bad = simplePathErrors(path, fp);
      if (bad.length > 0) errs.push(...bad);
      else if (!path.startsWith(under)) errs.push(invalid(fp, path, `should be a json path under ${under.slice(0, -1)}`));
    }
  }
  const selector = stringAt(scale, 'labelSelectorPath');
  if (selector) {
    const fp = p.child('scale.labelSelectorPath');
    const bad = simplePathErrors(selector, fp);
    if (bad.length > 0) errs.push(...bad);
    else if (!selector.startsWith('.spec.') && !selector.startsWith('.status.')) errs.push(invalid(fp, selector, 'should be a json path under either .spec or .status'));
  }
  return errs;
}

function validateColumn(c: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(c, 'name')) errs.push(required(p.child('name'), ''));
  const type = stringAt(c, 'type');
  if (!type) errs.push(required(p.child('type'), `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(type)) errs.push(invalid(p.child('type'), type, `must be one of ${COLUMN_TYPES.join(',')}`));
  const format = stringAt(c, 'format');
  if (format && !COLUMN_FORMATS.includes(format)) errs.push(invalid(p.child('format'), format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  const path = stringAt(c, 'jsonPath');
  if (!path) errs.push(required(p.child('JSONPath'), ''));
  else errs.push(...simplePathErrors(path, p.child('JSONPath')));
  return errs;
}

function validateSelectableFields(fields: unknown[], schema: Schema | undefined, p: FieldPath): FieldError[] {
  if (fields.length === 0) return [];
  if (!schema) return [invalid(p, '', 'may only be set when `version.schema.openAPIV3Schema` is not included')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const fp = p.index(i).child('jsonPath');
    const path = stringAt(f, 'jsonPath');
    if (!path) return errs.push(required(fp, ''));
    const names = parseRuleFieldPath(path, schema, { brackets: false });
    if (!names) return errs.push(invalid(fp, path, 'is an invalid path: does not refer to a valid field'));
    if (names[0] === 'metadata') errs.push(invalid(fp, path, 'must not point to fields in metadata'));
    let s: Schema | undefined = schema;
    for (const n of names) s = s?.properties?.[n] ?? (isObject(s?.additionalProperties) ? s.additionalProperties : undefined);
    if (!s || !['string', 'boolean', 'integer'].includes(s.type ?? '')) {
      errs.push(invalid(fp, path, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    const key = names.join('.');
    if (seen.has(key)) errs.push(duplicate(fp, path));
    seen.add(key);
    return undefined;
  });
  if (seen.size > MAX_SELECTABLE_FIELDS) errs.push(tooMany(p, seen.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

/**
 * orchd converts between versions only by their apiVersion (strategy None): a conversion webhook
 * is refused rather than accepted and never called.
 */
function validateConversion(conversion: JsonObject | undefined): FieldError[] {
  if (!conversion) return [];
  const p = spec.child('conversion');
  const strategy = stringAt(conversion, 'strategy');
  if (!strategy) return [required(p.child('strategy'), '')];
  if (strategy !== 'None') return [notSupported(p.child('strategy'), strategy, ['None'])];
  return conversion.webhook !== undefined ? [forbidden(p.child('webhook'), 'should not be set when strategy is not set to Webhook')] : [];
}
