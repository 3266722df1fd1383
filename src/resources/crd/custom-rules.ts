/**
 * The x-kubernetes-validations of a custom resource's schema, run as kube-apiserver runs them on
 * every write: each rule where its schema applies, `self` the value there and `oldSelf` the stored
 * value at the same place on updates (paired through objects, maps and map lists by their keys;
 * transition rules are skipped where there is none). All rules of one object share a runtime budget.
 *
 *   spec: Invalid value: "object": replicas must not exceed maxReplicas
 *   spec.replicas: Forbidden: may only grow       (reason FieldValueForbidden, fieldPath .replicas)
 */
import {
  CelCostLimitError,
  CelEvaluationError,
  SCHEMA_RULES_OBJECT_BUDGET,
  SchemaRuleScope,
  compileSchemaRule,
  runMessageExpression,
  runSchemaRule,
  type CelSchema,
  type CompiledSchemaRule,
  type RuleBudget,
} from '../../cel/index.js';
import { FieldPath, duplicate, forbidden, invalid, required, type FieldError } from '../../api/field-errors.js';
import { isObject, jsonEqual } from '../../api/json-access.js';
import type { Schema, ValidationRule } from '../../api/schema.js';
import { parseRuleFieldPath } from './rule-field-path.js';
import { selfSchema } from './schema-rules.js';

interface NodeRule {
  source: ValidationRule;
  compiled: CompiledSchemaRule;
  /** Where a failure is reported below the node (its fieldPath), as names. */
  fieldPath: string[];
}

interface NodeRules {
  self: CelSchema;
  rules: NodeRule[];
}

const MAX_MESSAGE_BYTES = 5 * 1024;
const BUDGET_GONE = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** The compiled rules of one schema, by node; undefined when the schema has none. */
export class SchemaRules {
  private readonly byNode = new Map<Schema, NodeRules>();

  static of(schema: Schema): SchemaRules | undefined {
    const r = new SchemaRules();
    r.compile(schema, true);
    return r.byNode.size > 0 ? r : undefined;
  }

  private compile(s: Schema, root: boolean): void {
    const list = s['x-kubernetes-validations'] ?? [];
    if (list.length > 0) {
      const self = selfSchema(s, root);
      const rules: NodeRule[] = [];
      for (const source of list) {
        const c = compileSchemaRule(source, self, 'x-kubernetes-validations');
        // The CRD was refused when a rule did not compile; one that stops compiling is not run.
        if (c.ok) rules.push({ source, compiled: c.rule, fieldPath: source.fieldPath ? (parseRuleFieldPath(source.fieldPath) ?? []) : [] });
      }
      this.byNode.set(s, { self, rules });
    }
    for (const sub of Object.values(s.properties ?? {})) this.compile(sub, false);
    if (isObject(s.additionalProperties)) this.compile(s.additionalProperties, false);
    if (s.items) this.compile(s.items, false);
    for (const sub of s.allOf ?? []) this.compile(sub, false);
  }

  /** Every failed rule of obj (old: the stored object on an update). */
  validate(schema: Schema, obj: unknown, old: unknown): FieldError[] {
    const errs: FieldError[] = [];
    const budget: RuleBudget = { remaining: SCHEMA_RULES_OBJECT_BUDGET, timeoutMs: 1000 };
    this.walk(schema, obj, old, FieldPath.root(''), errs, budget, false);
    return errs;
  }

  /**
   * false once the budget is gone: nothing more runs. parentUnchanged: the nearest value above that
   * is paired with a stored one equals it (ratcheting: a rule without oldSelf that fails on a value
   * left as it was is not an error, as kube-apiserver ratchets it since 1.33).
   */
  private walk(s: Schema, v: unknown, old: unknown, p: FieldPath, errs: FieldError[], budget: RuleBudget, parentUnchanged: boolean): boolean {
    if (v === undefined || v === null) return true;
    const unchanged = old === undefined ? parentUnchanged : jsonEqual(v, old);
    const node = this.byNode.get(s);
    if (node && !this.run(node, s, v, old, p, errs, budget, unchanged)) return false;
    for (const sub of s.allOf ?? []) if (!this.walk(sub, v, old, p, errs, budget, parentUnchanged)) return false;
    if (Array.isArray(v)) {
      if (!s.items) return true;
      const pair = pairItems(s, old);
      for (let i = 0; i < v.length; i++) if (!this.walk(s.items, v[i], pair(v[i]), p.index(i), errs, budget, unchanged)) return false;
      return true;
    }
    if (!isObject(v)) return true;
    const oldMap = isObject(old) && s['x-kubernetes-map-type'] !== 'atomic' ? old : undefined;
    for (const [k, child] of Object.entries(v)) {
      const declared = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      const sub = declared ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
      if (sub && !this.walk(sub, child, oldMap?.[k], declared ? p.child(k) : p.key(k), errs, budget, unchanged)) return false;
    }
    return true;
  }

  private run(node: NodeRules, s: Schema, v: unknown, old: unknown, p: FieldPath, errs: FieldError[], budget: RuleBudget, unchanged: boolean): boolean {
    const type = s.type ?? 'object';
    const shown = type === 'object' || type === 'array' ? undefined : v;
    const scope = new SchemaRuleScope({ self: v, ...(old !== undefined ? { oldSelf: old } : {}) }, node.self);
    for (const r of node.rules) {
      if (r.compiled.usesOldSelf && old === undefined && !r.compiled.optionalOldSelf) continue;
      if (budget.remaining <= 0) {
        errs.push(invalid(p, type, BUDGET_GONE));
        return false;
      }
      const described = r.source.message?.trim() || r.source.rule.trim();
      let result: unknown;
      try {
        result = runSchemaRule(r.compiled, scope, budget);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (e instanceof CelCostLimitError) {
          errs.push(invalid(p, type, `'${message}': no further validation rules will be run due to call cost exceeds limit for rule: ${described}`));
          return false;
        }
        if (!(e instanceof CelEvaluationError)) throw e;
        const detail = message.startsWith('no such overload')
          ? `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${described}`
          : `${message} evaluating rule: ${described}`;
        errs.push(invalid(p, type, detail));
        continue;
      }
      // The rule that overdraws the object's budget is refused as out of budget, its result unused.
      if (budget.remaining < 0) {
        errs.push(invalid(p, type, BUDGET_GONE));
        return false;
      }
      if (result === true) continue;
      if (unchanged && !r.compiled.usesOldSelf) continue;
      const at = r.fieldPath.reduce((fp, name) => fp.child(name), p);
      errs.push(failure(at, shown, this.message(r, scope, budget), r.source.reason));
    }
    return true;
  }

  /** The failure's message: messageExpression's result when it gives a usable one, else message, else the rule. */
  private message(r: NodeRule, scope: SchemaRuleScope, budget: RuleBudget): string {
    const fallback = r.source.message?.trim() || `failed rule: ${r.source.rule.trim()}`;
    if (!r.compiled.message) return fallback;
    try {
      const out = runMessageExpression(r.compiled, scope, budget);
      if (typeof out !== 'string') return fallback;
      const text = out.trim();
      return text === '' || /\n/.test(text) || Buffer.byteLength(text) > MAX_MESSAGE_BYTES ? fallback : text;
    } catch {
      return fallback;
    }
  }
}

function failure(p: FieldPath, value: unknown, detail: string, reason: ValidationRule['reason']): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbidden(p, detail);
    case 'FieldValueRequired':
      return required(p, detail);
    case 'FieldValueDuplicate':
      return duplicate(p, value);
    default:
      return value === undefined ? { type: 'FieldValueInvalid', field: String(p), detail } : invalid(p, value, detail);
  }
}

/** For a list, the stored item each new item is paired with: a map list pairs by its keys; other lists pair nothing. */
function pairItems(s: Schema, old: unknown): (item: unknown) => unknown {
  if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(old)) return () => undefined;
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const keyOf = (item: unknown) => (isObject(item) ? keys.map((k) => item[k]) : undefined);
  return (item) => {
    const key = keyOf(item);
    return key === undefined ? undefined : old.find((o) => jsonEqual(keyOf(o), key));
  };
}
