/**
 * The kind a CustomResourceDefinition defines, as a KindStrategy like any built-in kind's: the
 * registry, the HTTP layer, discovery and OpenAPI serve it with no code of their own. Each served
 * version gets its own strategy (servedAt): its schema (pruning, defaults, validation, CEL rules),
 * its subresources, columns and selectable fields; objects are stored at the version they were
 * written at and served at any other by their apiVersion (conversion None).
 */
import { FieldPath, invalid, type FieldError } from '../../api/field-errors.js';
import { since } from '../../api/human-duration.js';
import { isObject, listAt, objectAt, stringAt, type JsonObject } from '../../api/json-access.js';
import { objectMetaSchema } from '../meta-schema.js';
import type { Schema } from '../../api/schema.js';
import type { KindStrategy, ScaleSubresource, TableColumn } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import type { CustomNames } from '../../api/served-kinds.js';
import { SchemaRules } from './custom-rules.js';
import { compileJsonPath, evaluateJsonPath, printed } from './json-path.js';
import { applySchemaDefaults, pruneResource } from './prune-defaults.js';
import { ratchetSchemaErrors } from './ratcheting.js';
import { parseRuleFieldPath, valueAtPath } from './rule-field-path.js';
import { validateValue } from './value-validation.js';

/** The names a CRD serves its kind under. */
export interface CustomKindOptions {
  /** Why creates are refused now (the CRD is being deleted), if they are. */
  refuseCreate?: () => string | undefined;
}

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.';
const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/** The CRD's names (spec.names, defaults applied). */
export const namesOf = (crd: KubeObject): CustomNames => {
  const n = objectAt(objectAt(crd, 'spec'), 'names') ?? {};
  return {
    plural: stringAt(n, 'plural'),
    singular: stringAt(n, 'singular') || stringAt(n, 'kind').toLowerCase(),
    kind: stringAt(n, 'kind'),
    listKind: stringAt(n, 'listKind') || `${stringAt(n, 'kind')}List`,
    ...(listAt(n, 'shortNames').length ? { shortNames: listAt(n, 'shortNames').map(String) } : {}),
    ...(listAt(n, 'categories').length ? { categories: listAt(n, 'categories').map(String) } : {}),
  };
};

/** The served kind of a (valid) CRD. */
export function customKindOf(crd: KubeObject, opts: CustomKindOptions = {}): KindStrategy {
  const spec = objectAt(crd, 'spec') ?? {};
  const group = stringAt(spec, 'group');
  const names = namesOf(crd);
  const versions = listAt(spec, 'versions').filter(isObject);
  const served = versions.filter((v) => v.served === true);
  const storage = versions.find((v) => v.storage === true);
  // The stored version first (it names the storage version hash), when it is served.
  const ordered = [...served].sort((a, b) => (a === storage ? -1 : b === storage ? 1 : 0));
  const namespaced = stringAt(spec, 'scope') === 'Namespaced';
  const perVersion: Record<string, KindStrategy> = {};
  const versionNames = ordered.map((v) => stringAt(v, 'name'));
  for (const v of ordered) perVersion[stringAt(v, 'name')] = versionStrategy(v, { group, names, namespaced, versions: versionNames }, opts);
  const base = perVersion[versionNames[0] ?? ''];
  if (!base) throw new Error(`CustomResourceDefinition ${crd.metadata.name ?? ''} serves no version`);
  return { ...base, perVersion };
}

interface Common {
  group: string;
  names: CustomNames;
  namespaced: boolean;
  versions: string[];
}

function versionStrategy(v: JsonObject, c: Common, opts: CustomKindOptions): KindStrategy {
  const raw = (objectAt(objectAt(v, 'schema'), 'openAPIV3Schema') ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Schema;
  const schema = servedSchema(raw);
  const rules = SchemaRules.of(raw);
  const subresources = objectAt(v, 'subresources');
  const scale = objectAt(subresources, 'scale') as ScaleSubresource | undefined;
  const hasStatus = isObject(subresources?.status);
  const statusSchema = raw.properties?.status;
  const check = (obj: KubeObject, old: KubeObject | undefined): FieldError[] => {
    const errs = [...ratchetSchemaErrors(validateValue(obj, raw, FieldPath.root(''), true), raw, obj, old), ...scaleErrors(obj, scale)];
    return [...errs, ...celErrors(rules, raw, obj, old, errs)];
  };
  return {
    group: c.group,
    versions: c.versions,
    kind: c.names.kind,
    listKind: c.names.listKind,
    plural: c.names.plural,
    singular: c.names.singular,
    ...(c.names.shortNames ? { shortNames: c.names.shortNames } : {}),
    ...(c.names.categories ? { categories: c.names.categories } : {}),
    namespaced: c.namespaced,
    custom: true,
    hasStatus,
    allowUnconditionalUpdate: false,
    strategicMergePatch: false,
    ...(scale ? { scale } : {}),
    schema,
    prune: (obj) => pruneResource(obj, raw),
    applyDefaults: (obj) => applySchemaDefaults(obj, withoutMeta(raw)),
    validate: (obj) => check(obj, undefined),
    validateUpdate: (obj, old) => check(obj, old),
    validateStatusUpdate: (obj, old) => {
      const statusErrs = statusSchema ? ratchetSchemaErrors(validateValue(obj.status, statusSchema, FieldPath.root('status')), raw, obj, old) : [];
      const errs = [...statusErrs, ...scaleErrors(obj, scale, true)];
      return [...errs, ...celErrors(rules, raw, obj, old, errs)];
    },
    tableColumns: columnsOf(listAt(v, 'additionalPrinterColumns')),
    tableIncludesName: true,
    fieldSelectors: selectableFields(listAt(v, 'selectableFields')),
    ...(opts.refuseCreate ? { refuseCreate: opts.refuseCreate } : {}),
    ...(v.deprecated === true ? { deprecationWarning: stringAt(v, 'deprecationWarning') || `${c.group}/${stringAt(v, 'name')} ${c.names.kind} is deprecated` } : {}),
  };
}

/** The CEL rules, unless the object already fails in a way that makes them moot (kube's blocking errors). */
function celErrors(rules: SchemaRules | undefined, schema: Schema, obj: KubeObject, old: KubeObject | undefined, errs: FieldError[]): FieldError[] {
  if (!rules) return [];
  if (errs.some((e) => BLOCKING.has(e.type))) {
    return [
      { type: 'FieldValueInvalid', field: '<nil>', value: null, detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' },
    ];
  }
  return rules.validate(schema, obj, old);
}

/** Defaults apply below the resource's own apiVersion, kind and metadata, never to them. */
function withoutMeta(s: Schema): Schema {
  if (!s.properties) return s;
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = s.properties;
  return { ...s, properties: rest };
}

/**
 * The schema published (OpenAPI) and read by the patch room and CEL typing: the CRD's, with the
 * resource's apiVersion, kind and ObjectMeta declared at its root, as kube-apiserver publishes it.
 */
function servedSchema(raw: Schema): Schema {
  return {
    ...raw,
    type: 'object',
    properties: {
      ...raw.properties,
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: objectMetaSchema,
    },
  };
}

/** The replica counts of the scale subresource: non-negative 32-bit integers where they are set. */
function scaleErrors(obj: KubeObject, scale: ScaleSubresource | undefined, statusOnly = false): FieldError[] {
  if (!scale) return [];
  const paths = statusOnly ? [scale.statusReplicasPath] : [scale.specReplicasPath, scale.statusReplicasPath];
  const errs: FieldError[] = [];
  for (const path of paths) {
    const value = valueAtPath(obj, path.slice(1).split('.'));
    if (value === undefined) continue;
    const p = FieldPath.root(path);
    if (typeof value !== 'number' || !Number.isInteger(value)) errs.push(invalid(p, value, `${JSON.stringify(value)} is not an integer`));
    else if (value < 0) errs.push(invalid(p, value, 'should be a non-negative integer'));
    else if (value > 2 ** 31 - 1) errs.push(invalid(p, value, `should be less than or equal to ${2 ** 31 - 1}`));
  }
  return errs;
}

const AGE: TableColumn = {
  name: 'Age',
  type: 'date',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: (o) => since(o.metadata.creationTimestamp),
};

/** Name, then the CRD's columns (Age when it names none), each cell from its JSON path. */
function columnsOf(defs: unknown[]): TableColumn[] {
  const name: TableColumn = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0, cell: (o) => o.metadata.name ?? '' };
  if (defs.length === 0) return [name, AGE];
  return [
    name,
    ...defs.filter(isObject).map((d): TableColumn => {
      const type = stringAt(d, 'type') as TableColumn['type'];
      const jsonPath = stringAt(d, 'jsonPath');
      const steps = compileJsonPath(jsonPath);
      return {
        name: stringAt(d, 'name'),
        type,
        ...(stringAt(d, 'format') ? { format: stringAt(d, 'format') } : {}),
        description: stringAt(d, 'description') || `Custom resource definition column (in JSONPath format): ${jsonPath}`,
        priority: typeof d.priority === 'number' ? d.priority : 0,
        cell: (o) => cellOf(type, evaluateJsonPath(steps, o)[0]),
      };
    }),
  ];
}

function cellOf(type: TableColumn['type'], v: unknown): string | number | boolean | null {
  if (v === undefined || v === null) return null;
  switch (type) {
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date':
      return typeof v === 'string' ? (Number.isNaN(Date.parse(v)) ? '<invalid>' : since(v)) : null;
    default:
      return printed(v);
  }
}

/** selectableFields as field selectors: `spec.color=red` matches the value's text. */
function selectableFields(fields: unknown[]): Record<string, (o: KubeObject) => string> | undefined {
  if (fields.length === 0) return undefined;
  const out: Record<string, (o: KubeObject) => string> = {};
  for (const f of fields) {
    const path = stringAt(f, 'jsonPath');
    const names = parseRuleFieldPath(path, undefined, { brackets: false });
    if (!names) continue;
    out[names.join('.')] = (o) => {
      const v = valueAtPath(o, names);
      return v === undefined || v === null ? '' : String(v);
    };
  }
  return out;
}
