/**
 * A CRD schema's x-kubernetes-validations checked when the CRD is written, as kube-apiserver does:
 * each rule compiles (CEL room) with `self` typed by the schema it sits on, its messageExpression
 * too, a transition rule (oldSelf) only where old and new values can be paired (not inside atomic
 * lists, sets or atomic maps), and each rule's estimated cost times how often it may run (every item
 * of the lists and maps above it) stays under 10M, all of them together under 100M.
 */
import { compileSchemaRule, minSerializedSize, type CelSchema } from '../../cel/index.js';
import { FieldPath, forbidden, invalid, type FieldError } from '../../api/field-errors.js';
import { isObject, type JsonObject } from '../../api/json-access.js';
import type { Schema } from '../../api/schema.js';
import { parseRuleFieldPath } from './rule-field-path.js';

/** Kubernetes' static cost limits: per expression, and for every rule of a CRD's schema. */
export const STATIC_RULE_COST_LIMIT = 10_000_000;
export const STATIC_CRD_COST_LIMIT = 100_000_000;
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/**
 * How often a rule may run when a list or map above it has no maxItems/maxProperties: as many
 * values of its node as fit in the largest request (kube's maxCardinality), not the product of the
 * unbounded sizes above it.
 */
function maxCardinality(node: CelSchema): number {
  return Math.floor(MAX_REQUEST_BYTES / (minSerializedSize(node) + 1));
}

/** Every rule's cost, for the CRD-wide limit. */
export class RuleCosts {
  private readonly costs: { path: FieldPath; cost: number }[] = [];
  private total = 0;

  /** An update that leaves the schema as it was: the per-expression limit is not applied, the total is. */
  constructor(readonly suppressPerExpression = false) {}

  add(path: FieldPath, cost: number): void {
    this.total += cost;
    // Kubernetes names only rules of at least 1% of the limit (TotalCost.ObserveExpressionCost).
    if (cost >= STATIC_CRD_COST_LIMIT / 100) this.costs.push({ path, cost });
  }

  /** The CRD-wide limit's errors: each of the costliest four rules, then the total. */
  totalErrors(schemaPath: FieldPath): FieldError[] {
    if (this.total <= STATIC_CRD_COST_LIMIT) return [];
    const costliest = [...this.costs].sort((a, b) => b.cost - a.cost).slice(0, 4);
    return [
      ...costliest.map((c) => forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema')),
      forbidden(schemaPath, costMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', this.total, STATIC_CRD_COST_LIMIT)),
    ];
  }
}

/** Where a node sits for its rules: how often they may run, at the root or not, whether oldSelf can be paired there. */
export class RuleContext {
  constructor(
    /** How many times the node may occur: the product of maxItems/maxProperties above it; undefined once one is missing (unbounded). */
    readonly cardinality: number | undefined,
    readonly root: boolean,
    readonly costs: RuleCosts,
    /** The first list or map above where old and new values cannot be paired. */
    readonly uncorrelatable?: FieldPath,
  ) {}

  child(_sub: JsonObject, o: { times?: number; perItemOf?: JsonObject; uncorrelatable?: FieldPath | undefined }): RuleContext {
    const times = o.perItemOf ? o.times : 1;
    const cardinality = this.cardinality === undefined || times === undefined ? undefined : Math.min(Number.MAX_SAFE_INTEGER, this.cardinality * Math.max(0, times));
    return new RuleContext(cardinality, false, this.costs, this.uncorrelatable ?? o.uncorrelatable);
  }
}

/** Kube's wording of a cost over its limit, with the factor it exceeds it by. */
export function costMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** What `self` is typed by: the node, and at the root apiVersion, kind and metadata's name and generateName. */
export function selfSchema(s: Schema, root: boolean): CelSchema {
  if (!root) return s as CelSchema;
  const name: CelSchema = { type: 'string' };
  return {
    ...(s as CelSchema),
    type: 'object',
    properties: {
      ...(s.properties as Record<string, CelSchema> | undefined),
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', properties: { name, generateName: name } },
    },
  };
}

/**
 * A rule as kube-apiserver holds it when it reports one that does not compile: its internal
 * apiextensions.ValidationRule, which json.Marshal writes with Go's field names, in their order.
 */
function internalRule(r: JsonObject): Record<string, unknown> {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    Rule: str(r.rule),
    Message: str(r.message),
    MessageExpression: str(r.messageExpression),
    Reason: typeof r.reason === 'string' ? r.reason : null,
    FieldPath: str(r.fieldPath),
    OptionalOldSelf: typeof r.optionalOldSelf === 'boolean' ? r.optionalOldSelf : null,
  };
}

/** Every error of the rules on one node: compilation, oldSelf where it cannot be paired, fieldPath, cost. */
export function compileNodeRules(s: Schema, rules: unknown[], p: FieldPath, ctx: RuleContext): FieldError[] {
  const errs: FieldError[] = [];
  const self = selfSchema(s, ctx.root);
  rules.forEach((r, i) => {
    if (!isObject(r) || typeof r.rule !== 'string') return;
    const rp = p.child('x-kubernetes-validations').index(i);
    if (typeof r.fieldPath === 'string' && r.fieldPath.trim() !== '' && !parseRuleFieldPath(r.fieldPath, s)) {
      errs.push(invalid(rp.child('fieldPath'), r.fieldPath, 'must be a valid path'));
    }
    const compiled = compileSchemaRule(
      { rule: r.rule, ...(typeof r.messageExpression === 'string' ? { messageExpression: r.messageExpression } : {}), optionalOldSelf: r.optionalOldSelf === true },
      self,
      String(rp),
    );
    if (!compiled.ok) {
      for (const e of compiled.errors) errs.push(e.type === 'FieldValueInvalid' ? { ...e, value: internalRule(r) } : e);
      return;
    }
    const times = ctx.cardinality ?? maxCardinality(self);
    const cost = compiled.rule.cost * times;
    if (cost > STATIC_RULE_COST_LIMIT && !ctx.costs.suppressPerExpression) errs.push(forbidden(rp.child('rule'), costMessage('estimated rule cost', cost, STATIC_RULE_COST_LIMIT)));
    ctx.costs.add(rp.child('rule'), cost);
    if (compiled.rule.message) {
      // kube-apiserver charges a messageExpression once, not once per place the rule may run.
      const messageCost = compiled.rule.messageCost;
      if (messageCost > STATIC_RULE_COST_LIMIT && !ctx.costs.suppressPerExpression)
        errs.push(forbidden(rp.child('messageExpression'), costMessage('estimated messageExpression cost', messageCost, STATIC_RULE_COST_LIMIT)));
      ctx.costs.add(rp.child('messageExpression'), messageCost);
    }
    if (compiled.rule.usesOldSelf && ctx.uncorrelatable) {
      errs.push(invalid(rp.child('rule'), r.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${String(ctx.uncorrelatable)}`));
    } else if (!compiled.rule.usesOldSelf && r.optionalOldSelf !== undefined) {
      errs.push(invalid(rp.child('optionalOldSelf'), r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
  return errs;
}
