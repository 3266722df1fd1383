/**
 * What one node of a CRD's schema may say, as kube-apiserver's CRD validation words it: the
 * OpenAPI keywords it does not support, the list and map types and their keys, the shape of each
 * x-kubernetes-validations entry, and the structural-schema rules of a node (a type everywhere
 * except under int-or-string or preserve-unknown-fields, items for arrays, objects at the root and
 * for embedded resources, nothing but name and generateName in the root's metadata).
 */
import { RE2JS } from 're2js';
import { FieldPath, forbidden, invalid, notSupported, required, type FieldError } from '../../api/field-errors.js';
import { isObject, jsonEqual } from '../../api/json-access.js';
import type { JsonObject } from '../../api/json-access.js';

export type Level = 'root' | 'item' | 'field';
const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
/** What the root of a schema may say when the status subresource is served (status is cut out of it). */
const ROOT_WITH_STATUS = new Set([
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);

const hasNewline = (s: string) => /[\n\r]/.test(s);

/** The keywords kube-apiserver's schemas do not support, and the forms it refuses. */
export function unsupportedKeywords(s: JsonObject, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof s.type === 'string' && s.type !== '' && !TYPES.includes(s.type)) errs.push(notSupported(p.child('type'), s.type, TYPES));
  if (s.type === 'null') errs.push(forbidden(p.child('type'), 'type cannot be set to null, use nullable as an alternative'));
  if (s.id) errs.push(forbidden(p.child('id'), 'id is not supported'));
  if (s.additionalItems !== undefined) errs.push(forbidden(p.child('additionalItems'), 'additionalItems is not supported'));
  if (isObject(s.patternProperties) && Object.keys(s.patternProperties).length > 0) errs.push(forbidden(p.child('patternProperties'), 'patternProperties is not supported'));
  if (isObject(s.definitions) && Object.keys(s.definitions).length > 0) errs.push(forbidden(p.child('definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined) errs.push(forbidden(p.child('dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(forbidden(p.child('$ref'), '$ref is not supported'));
  if (Array.isArray(s.items)) errs.push(forbidden(p.child('items'), 'items must be a schema object and not an array'));
  if (s.uniqueItems === true) errs.push(forbidden(p.child('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const props = isObject(s.properties) ? Object.keys(s.properties) : [];
  if (s.additionalProperties !== undefined && props.length > 0 && (s.additionalProperties === false || isObject(s.additionalProperties))) {
    errs.push(forbidden(p.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) errs.push(invalid(p.child('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  if (typeof s.pattern === 'string') {
    const problem = patternProblem(s.pattern);
    if (problem !== undefined) errs.push(invalid(p.child('pattern'), s.pattern, `must be a valid regular expression, but isn't: ${problem}`));
  }
  return errs;
}

/**
 * Why RE2 refuses a pattern (undefined: it compiles), remembered: large CRDs repeat a few patterns
 * (a DNS name's, a label's) on hundreds of fields, and compiling each again was most of the time a
 * 2 MB CRD took to check (1,260 compiles of one pattern per create in bench/crd-install.ts).
 */
const patternProblems = new Map<string, string | undefined>();
function patternProblem(pattern: string): string | undefined {
  if (patternProblems.has(pattern)) return patternProblems.get(pattern);
  let problem: string | undefined;
  try {
    RE2JS.compile(pattern);
  } catch (e) {
    problem = (e as Error).message;
  }
  if (patternProblems.size >= 2000) patternProblems.clear();
  patternProblems.set(pattern, problem);
  return problem;
}

/** x-kubernetes-map-type, -list-type and -list-map-keys, and what map and set lists ask of their items. */
export function listAndMapTypes(s: JsonObject, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof s.type === 'string' ? s.type : '';
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && type !== 'object')
    errs.push(type ? invalid(p.child('type'), type, 'must be object if x-kubernetes-map-type is specified') : required(p.child('type'), 'must be object if x-kubernetes-map-type is specified'));
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') errs.push(notSupported(p.child('x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  const listType = s['x-kubernetes-list-type'];
  const items = isObject(s.items) ? s.items : undefined;
  if (listType !== undefined && type !== 'array') {
    errs.push(type ? invalid(p.child('type'), type, 'must be array if x-kubernetes-list-type is specified') : required(p.child('type'), 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    if (items.type === 'array' && items['x-kubernetes-list-type'] !== undefined && items['x-kubernetes-list-type'] !== 'atomic') {
      errs.push(invalid(p.child('items', 'x-kubernetes-list-type'), items['x-kubernetes-list-type'], 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      errs.push(invalid(p.child('items', 'x-kubernetes-map-type'), items['x-kubernetes-map-type'] ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType as string)) errs.push(notSupported(p.child('x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]) : [];
  if (keys.length > 0 && listType !== 'map') {
    errs.push(
      listType === undefined
        ? required(p.child('x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty')
        : invalid(p.child('x-kubernetes-list-type'), listType, 'must be map if x-kubernetes-list-map-keys is non-empty'),
    );
  }
  if (listType === 'map') errs.push(...mapListItems(s, keys, items, p));
  if ((listType === 'set' || listType === 'map') && items?.nullable === true)
    errs.push(forbidden(p.child('items', 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${String(listType)}`));
  return errs;
}

function mapListItems(s: JsonObject, keys: unknown[], items: JsonObject | undefined, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (keys.length === 0) errs.push(required(p.child('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
  if (s.items === undefined) errs.push(required(p.child('items'), 'must have a schema if x-kubernetes-list-type is map'));
  if (!items) return errs;
  if (items.type !== 'object') {
    errs.push(invalid(p.child('items', 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    return errs;
  }
  const props = isObject(items.properties) ? items.properties : {};
  const requiredKeys = Array.isArray(items.required) ? items.required : [];
  const seen = new Set<unknown>();
  for (const k of keys) {
    const prop = typeof k === 'string' && Object.hasOwn(props, k) && isObject(props[k]) ? (props[k] as JsonObject) : undefined;
    if (!prop) errs.push(invalid(p.child('x-kubernetes-list-map-keys'), keys, 'entries must all be names of item properties'));
    else {
      if (prop.type === 'array' || prop.type === 'object')
        errs.push(
          invalid(
            p
              .child('items', 'properties')
              .key(k as string)
              .child('type'),
            items.type,
            "must be a scalar type if parent array's x-kubernetes-list-type is map",
          ),
        );
      if (!requiredKeys.includes(k) && prop.default === undefined) {
        errs.push(
          required(
            p
              .child('items', 'properties')
              .key(k as string)
              .child('default'),
            'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
          ),
        );
      }
      if (prop.nullable === true)
        errs.push(
          forbidden(
            p
              .child('items', 'properties')
              .key(k as string)
              .child('nullable'),
            'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
          ),
        );
    }
    if (seen.has(k)) errs.push(invalid(p.child('x-kubernetes-list-map-keys'), keys, 'must not contain duplicate entries'));
    seen.add(k);
  }
  return errs;
}

/** The shape of each x-kubernetes-validations entry (its CEL is compiled elsewhere). */
export function ruleShapes(rules: unknown[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((r, i) => {
    const rp = p.child('x-kubernetes-validations').index(i);
    if (!isObject(r)) return;
    const rule = typeof r.rule === 'string' ? r.rule.trim() : '';
    const message = typeof r.message === 'string' ? r.message : undefined;
    if (rule === '') errs.push(required(rp.child('rule'), 'rule is not specified'));
    else if (message !== undefined && message.trim() === '') errs.push(invalid(rp.child('message'), message, 'must be non-empty if specified'));
    else if (message !== undefined && hasNewline(message.trim())) errs.push(invalid(rp.child('message'), message, 'must not contain line breaks'));
    else if (hasNewline(rule) && (message ?? '').trim() === '') errs.push(required(rp.child('message'), 'message must be specified if rule contains line breaks'));
    if (typeof r.messageExpression === 'string' && r.messageExpression.trim() === '') errs.push(required(rp.child('messageExpression'), 'messageExpression must be non-empty if specified'));
    if (r.reason !== undefined && !REASONS.includes(r.reason as string)) errs.push(notSupported(rp.child('reason'), r.reason, REASONS));
    if (typeof r.fieldPath === 'string') {
      if (r.fieldPath !== '' && r.fieldPath.trim() === '') errs.push(invalid(rp.child('fieldPath'), r.fieldPath, 'must be non-empty if specified'));
      if (hasNewline(r.fieldPath)) errs.push(invalid(rp.child('fieldPath'), r.fieldPath, 'must not contain line breaks'));
    }
  });
  return errs;
}

/** The structural rules of one node at its level (root, array item, object field). */
export function structuralInvariants(s: JsonObject, level: Level, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof s.type === 'string' ? s.type : '';
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (type === 'array' && s.items === undefined) errs.push(required(p.child('items'), 'must be specified'));
  if (s.additionalProperties !== undefined && level === 'root') errs.push(forbidden(p.child('additionalProperties'), 'must not be used at the root'));
  if (embedded && type !== 'object')
    errs.push(
      type ? invalid(p.child('type'), type, 'must be object if x-kubernetes-embedded-resource is true') : required(p.child('type'), 'must be object if x-kubernetes-embedded-resource is true'),
    );
  else if (!type && !intOrString && !preserve) {
    const where = level === 'root' ? 'at the root' : level === 'item' ? 'for specified array items' : 'for specified object fields';
    errs.push(required(p.child('type'), `must not be empty ${where}`));
  }
  if (embedded && s.additionalProperties !== undefined) errs.push(forbidden(p.child('additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (level === 'root' && type && type !== 'object') errs.push(invalid(p.child('type'), type, 'must be object at the root'));
  const props = isObject(s.properties) ? s.properties : {};
  const resource = level === 'root' || embedded;
  for (const f of ['kind', 'apiVersion'] as const) {
    const fs = props[f];
    if (resource && isObject(fs) && fs.type !== 'string') errs.push(invalid(p.child('properties').key(f).child('type'), fs.type ?? '', 'must be string'));
  }
  const meta = props.metadata;
  if (isObject(meta)) {
    if (resource && meta.type !== 'object') errs.push(invalid(p.child('properties').key('metadata').child('type'), meta.type ?? '', 'must be object'));
    if (level === 'root' && !onlyNames(meta)) {
      errs.push(forbidden(p.child('properties').key('metadata'), 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (embedded && !preserve && Object.keys(props).length === 0) {
    errs.push(required(p.child('properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  if (intOrString && preserve) errs.push(invalid(p.child('x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(invalid(p.child('x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  return errs;
}

/** The root's metadata may restrict name and generateName, and say nothing else but its type. */
function onlyNames(meta: JsonObject): boolean {
  const { type: _t, default: _d, properties, ...rest } = meta;
  if (Object.keys(rest).length > 0) return false;
  if (properties === undefined) return true;
  return isObject(properties) && Object.keys(properties).every((k) => k === 'name' || k === 'generateName');
}

/** What the root may say when status is a subresource. */
export function rootWithStatus(s: JsonObject, p: FieldPath): FieldError[] {
  if (s.type !== undefined && s.type !== 'object') {
    return [invalid(p.child('type'), s.type, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')];
  }
  const extra = Object.keys(s).filter((k) => !ROOT_WITH_STATUS.has(k) && s[k] !== undefined && !jsonEqual(s[k], false));
  return extra.length === 0 ? [] : [invalid(p, '', `only ${[...ROOT_WITH_STATUS].join(', ')} fields are allowed at the root of the schema if the status subresource is enabled`)];
}

/** Inside allOf, anyOf, oneOf and not only value validations may appear (kube's NestedValueValidation). */
export function nestedValueOnly(s: JsonObject, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const is = (k: string, detail: string) => s[k] !== undefined && s[k] !== false && s[k] !== '' && errs.push(forbidden(p.child(k), detail));
  is('type', 'must be empty to be structural');
  is('additionalProperties', 'must be undefined to be structural');
  is('default', 'must be undefined to be structural');
  is('title', 'must be empty to be structural');
  is('description', 'must be empty to be structural');
  is('nullable', 'must be false to be structural');
  is('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  is('x-kubernetes-embedded-resource', 'must be false to be structural');
  is('x-kubernetes-int-or-string', 'must be false to be structural');
  is('x-kubernetes-list-map-keys', 'must be empty to be structural');
  is('x-kubernetes-list-type', 'must be undefined to be structural');
  is('x-kubernetes-map-type', 'must be undefined to be structural');
  is('x-kubernetes-validations', 'must be empty to be structural');
  if (isObject(s.properties) && s.properties.metadata !== undefined) errs.push(forbidden(p.child('properties').key('metadata'), 'must not be specified in a nested context'));
  return errs;
}
