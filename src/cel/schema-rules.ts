/**
 * The rules of a CustomResourceDefinition's schema (x-kubernetes-validations): each is compiled
 * with `self` typed by the schema it sits on and `oldSelf` the same (a transition rule, run on
 * updates only), must return bool, and may have a messageExpression returning string. Costs are
 * estimated from the schema's bounds; the caller multiplies them by how often the rule may run
 * (its place under lists and maps) against the CRD's limits.
 *
 *   const r = compileSchemaRule({ rule: 'self.replicas <= self.max' }, specSchema, 'spec…x-kubernetes-validations[0]');
 *   if (r.ok) runSchemaRule(r.rule, { self: obj.spec, oldSelf: old?.spec }, specSchema, budget)
 */
import { measured, type EvaluationBounds } from './budget.js';
import { PolicyCompiler, type CelProgram } from './compiler.js';
import type { CelFieldError } from './errors.js';
import type { CelSchema } from './schema.js';
import { tokenize } from './tokens.js';
import { jsonToCel } from './values.js';
import { Optional } from '@marcbachmann/cel-js';

/** Kubernetes' per-call runtime cost limit of a rule (PerCallLimit). */
export const SCHEMA_RULE_CALL_LIMIT = 1_000_000;
/** Kubernetes' runtime budget of all the rules of one object (RuntimeCELCostBudget). */
export const SCHEMA_RULES_OBJECT_BUDGET = 10_000_000;

export interface CompiledSchemaRule {
  program: CelProgram;
  /** Reads oldSelf: a transition rule, skipped when there is no old value (unless optionalOldSelf). */
  usesOldSelf: boolean;
  optionalOldSelf: boolean;
  message?: CelProgram;
  /** The static cost of one run (rule, plus its messageExpression). */
  cost: number;
  messageCost: number;
}

export type SchemaRuleResult = { ok: true; rule: CompiledSchemaRule } | { ok: false; errors: CelFieldError[] };

const compilers = [new WeakMap<object, PolicyCompiler>(), new WeakMap<object, PolicyCompiler>()];
const NO_SCHEMA = {};

/** One compiler per schema (and per kind of oldSelf): rules on the same schema share its checker. */
function compilerFor(schema: CelSchema | undefined, optionalOldSelf: boolean): PolicyCompiler {
  const bySchema = compilers[optionalOldSelf ? 1 : 0]!;
  const key = schema ?? NO_SCHEMA;
  let c = bySchema.get(key);
  if (!c) {
    const schemas = { ...(schema ? { object: schema } : {}), ...(optionalOldSelf ? { optionalOldSelf } : {}) };
    bySchema.set(key, (c = new PolicyCompiler({ kind: 'schemaRule', schemas, costLimit: Number.POSITIVE_INFINITY })));
  }
  return c;
}

/** Whether an expression names oldSelf (as an identifier, not a field or a string). */
const readsOldSelf = (expression: string): boolean =>
  tokenize(expression).some((t, i, all) => t.kind === 'ident' && t.text === 'oldSelf' && all[i - 1]?.text !== '.');

/**
 * Compiles one rule at fieldPath (`…x-kubernetes-validations[0]`): errors name `.rule` or
 * `.messageExpression` below it, in Kubernetes' words.
 */
export function compileSchemaRule(
  rule: { rule: string; messageExpression?: string; optionalOldSelf?: boolean },
  schema: CelSchema | undefined,
  fieldPath: string,
): SchemaRuleResult {
  const compiler = compilerFor(schema, rule.optionalOldSelf === true);
  const errors: CelFieldError[] = [];
  const compiled = compiler.compile(rule.rule, { fieldPath: `${fieldPath}.rule`, returns: ['bool'] });
  if (!compiled.ok) {
    for (const e of compiled.errors) errors.push(e.detail?.startsWith('must evaluate to') ? { ...e, detail: 'cel expression must evaluate to a bool' } : e);
  }
  let message: CelProgram | undefined;
  if (rule.messageExpression !== undefined && rule.messageExpression.trim() !== '') {
    const m = compiler.compile(rule.messageExpression, { fieldPath: `${fieldPath}.messageExpression`, returns: ['string'] });
    if (m.ok) message = m.program;
    else {
      for (const e of m.errors) {
        const detail = e.detail?.startsWith('must evaluate to') ? 'messageExpression must evaluate to a string' : `messageExpression ${e.detail ?? ''}`;
        errors.push({ ...e, detail });
      }
    }
  }
  if (!compiled.ok || errors.length > 0) return { ok: false, errors };
  const usesOldSelf = readsOldSelf(rule.rule);
  return {
    ok: true,
    rule: {
      program: compiled.program,
      usesOldSelf,
      optionalOldSelf: rule.optionalOldSelf === true,
      ...(message ? { message } : {}),
      cost: compiled.program.estimatedCost,
      messageCost: message?.estimatedCost ?? 0,
    },
  };
}

/** What is left of an object's budget as its rules run. */
export interface RuleBudget {
  remaining: number;
  timeoutMs: number;
}

/**
 * Runs a rule on self (and oldSelf when the rule reads it), charging the budget. Returns the
 * result (true passes) or throws the library's CelEvaluationError (CelCostLimitError past the call
 * limit or the budget).
 */
export function runSchemaRule(rule: CompiledSchemaRule, values: { self: unknown; oldSelf?: unknown }, schema: CelSchema | undefined, budget: RuleBudget): unknown {
  return run(rule.program, rule, values, schema, budget);
}

/** The rule's messageExpression on the same values, under the same budget. */
export function runMessageExpression(rule: CompiledSchemaRule, values: { self: unknown; oldSelf?: unknown }, schema: CelSchema | undefined, budget: RuleBudget): unknown {
  return rule.message ? run(rule.message, rule, values, schema, budget) : undefined;
}

function run(program: CelProgram, rule: CompiledSchemaRule, values: { self: unknown; oldSelf?: unknown }, schema: CelSchema | undefined, budget: RuleBudget): unknown {
  const bounds: EvaluationBounds = { costLimit: Math.min(SCHEMA_RULE_CALL_LIMIT, budget.remaining), timeoutMs: budget.timeoutMs };
  const old = values.oldSelf === undefined ? undefined : jsonToCel(values.oldSelf, schema);
  const context = {
    self: jsonToCel(values.self, schema),
    oldSelf: rule.optionalOldSelf ? (old === undefined ? Optional.none() : Optional.of(old)) : (old ?? null),
  };
  const { value, cost } = measured(bounds, () => program.evaluate({ context, bounds }));
  budget.remaining -= cost;
  return value;
}
