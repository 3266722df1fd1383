/**
 * A CustomResourceDefinition version's openAPIV3Schema checked as kube-apiserver checks it before
 * serving anything: every node's keywords and structure (schema-node-checks.ts), defaults that fit
 * their schema and declare nothing unknown, and x-kubernetes-validations that compile and stay
 * within the CEL cost limits (schema-rules.ts). Every error carries its path below
 * `spec.versions[i].schema.openAPIV3Schema`.
 */
import { FieldPath, forbidden, invalid, type FieldError } from '../../api/field-errors.js';
import { cloneJson, isObject, jsonEqual, type JsonObject } from '../../api/json-access.js';
import type { Schema } from '../../api/schema.js';
import { applySchemaDefaults, pruneValue } from './prune-defaults.js';
import { listAndMapTypes, nestedValueOnly, rootWithStatus, ruleShapes, structuralInvariants, unsupportedKeywords, type Level } from './schema-node-checks.js';
import { RuleContext, RuleCosts, compileNodeRules } from './schema-rules.js';
import { validateValue } from './value-validation.js';

interface Walk {
  level: Level;
  /** The path of the object field this node validates (spec.replicas), for defaults' messages. */
  valuePath: FieldPath;
  /** Why a default may not be set here, if it may not. */
  noDefaults?: string;
  /** Inside a resource's apiVersion, kind or metadata (the root's or an embedded one's). */
  insideMeta: boolean;
  rules: RuleContext;
}

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

/** Every error of one version's schema; an empty list means it can be served. */
export function validateVersionSchema(schema: unknown, p: FieldPath, statusEnabled: boolean, suppressPerExpressionCost = false): FieldError[] {
  if (!isObject(schema)) return [];
  const errs: FieldError[] = [];
  if (statusEnabled) errs.push(...rootWithStatus(schema, p));
  if (schema.nullable === true) errs.push(forbidden(p.child('nullable'), 'nullable cannot be true at the root'));
  const costs = new RuleCosts(suppressPerExpressionCost);
  walk(schema, p, { level: 'root', valuePath: FieldPath.root(''), insideMeta: false, rules: new RuleContext(1, true, costs) }, errs);
  errs.push(...costs.totalErrors(p));
  return errs;
}

function walk(s: JsonObject, p: FieldPath, w: Walk, errs: FieldError[]): void {
  const before = errs.length;
  errs.push(...unsupportedKeywords(s, p), ...listAndMapTypes(s, p), ...structuralInvariants(s, w.level, p));
  if (w.insideMeta && s['x-kubernetes-embedded-resource'] === true) errs.push(forbidden(p.child('x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  if (s.default !== undefined && w.noDefaults !== undefined) errs.push(forbidden(p.child('default'), `must not be set ${w.noDefaults}`.trimEnd()));
  const rules = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
  errs.push(...ruleShapes(rules, p));
  walkChildren(s, p, w, errs);
  walkComposition(s, p, errs);
  // A default is checked against a schema that is itself sound (kube validates defaults only then).
  if (s.default !== undefined && w.noDefaults === undefined && errs.length === before) errs.push(...defaultErrors(s, p, w));
  // Rules are compiled only where the schema at and below them is sound (kube skips them otherwise).
  if (errs.length === before && rules.length > 0) errs.push(...compileNodeRules(s as Schema, rules, p, w.rules));
}

function walkChildren(s: JsonObject, p: FieldPath, w: Walk, errs: FieldError[]): void {
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const atomicMap = s['x-kubernetes-map-type'] === 'atomic';
  if (isObject(s.properties)) {
    for (const [name, sub] of Object.entries(s.properties)) {
      if (!isObject(sub)) continue;
      const meta = (w.level === 'root' || embedded) && META_FIELDS.has(name);
      walk(
        sub,
        p.child('properties').key(name),
        {
          level: 'field',
          valuePath: w.valuePath.child(name),
          noDefaults: meta && w.level === 'root' ? `in top-level ${name}` : w.noDefaults,
          insideMeta: w.insideMeta || meta,
          rules: w.rules.child(sub, { uncorrelatable: atomicMap ? p : undefined }),
        },
        errs,
      );
    }
  }
  if (isObject(s.additionalProperties)) {
    walk(
      s.additionalProperties,
      p.child('additionalProperties'),
      {
        level: 'field',
        valuePath: w.valuePath.child('*'),
        noDefaults: w.insideMeta ? 'inside additionalProperties applying to object metadata' : w.noDefaults,
        insideMeta: w.insideMeta,
        rules: w.rules.child(s.additionalProperties, { times: s.maxProperties as number | undefined, perItemOf: s }),
      },
      errs,
    );
  }
  if (isObject(s.items)) {
    walk(
      s.items,
      p.child('items'),
      {
        level: 'item',
        valuePath: w.valuePath.index(0),
        noDefaults: w.noDefaults,
        insideMeta: w.insideMeta,
        rules: w.rules.child(s.items, { times: s.maxItems as number | undefined, perItemOf: s, uncorrelatable: s['x-kubernetes-list-type'] === 'map' ? undefined : p }),
      },
      errs,
    );
  }
}

/** allOf, anyOf, oneOf, not: value validations only (the int-or-string anyOf pattern is allowed its types). */
function walkComposition(s: JsonObject, p: FieldPath, errs: FieldError[]): void {
  const nested = (sub: unknown, sp: FieldPath, skipTypes: boolean) => {
    if (!isObject(sub)) return;
    errs.push(...unsupportedKeywords(sub, sp));
    if (!skipTypes) errs.push(...nestedValueOnly(sub, sp));
    if (isObject(sub.properties)) for (const [k, v] of Object.entries(sub.properties)) nested(v, sp.child('properties').key(k), false);
    if (isObject(sub.items)) nested(sub.items, sp.child('items'), false);
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(sub[key])) (sub[key] as unknown[]).forEach((x, i) => nested(x, sp.child(key).index(i), false));
    if (sub.not !== undefined) nested(sub.not, sp.child('not'), false);
  };
  const intOrStringAnyOf = (list: unknown) => Array.isArray(list) && jsonEqual(list, INT_OR_STRING_ANY_OF);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    const list = s[key] as unknown[];
    const skip = key === 'anyOf' && intOrStringAnyOf(list);
    list.forEach((sub, i) => {
      const firstAllOf = key === 'allOf' && i === 0 && isObject(sub) && intOrStringAnyOf(sub.anyOf);
      if (firstAllOf && isObject(sub)) {
        const { anyOf: _a, ...rest } = sub;
        nested(rest, p.child(key).index(i), false);
      } else nested(sub, p.child(key).index(i), skip);
    });
  }
  if (s.not !== undefined) nested(s.not, p.child('not'), false);
}

/**
 * A default must be valid for its schema (after the defaults below it are applied) and must not
 * hold fields the schema would prune: kube-apiserver applies it as it is, without validating it.
 */
function defaultErrors(s: JsonObject, p: FieldPath, w: Walk): FieldError[] {
  const { default: value, ...schema } = s;
  const dp = p.child('default');
  const filled = cloneJson(value);
  applySchemaDefaults(filled, schema as Schema);
  const errs = validateValue(filled, schema as Schema, w.valuePath).map((e) => ({ ...e, field: String(dp) }));
  if (errs.length > 0) return errs;
  if (pruneValue(cloneJson(filled), schema as Schema).length > 0) return [invalid(dp, value, 'must not have unknown fields')];
  return [];
}
