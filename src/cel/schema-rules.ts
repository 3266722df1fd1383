/**
 * The rules of a CustomResourceDefinition's schema (x-kubernetes-validations): each is compiled
 * with `self` typed by the schema it sits on and `oldSelf` the same (a transition rule, run on
 * updates only), must return bool, and may have a messageExpression returning string. Costs are
 * estimated from the schema's bounds; the caller multiplies them by how often the rule may run
 * (its place under lists and maps) against the CRD's limits.
 *
 *   const r = compileSchemaRule({ rule: 'self.replicas <= self.max' }, specSchema, 'spec…x-kubernetes-validations[0]');
 *   if (r.ok) runSchemaRule(r.rule, new SchemaRuleScope({ self: obj.spec, oldSelf: old?.spec }, specSchema), budget)
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

/**
 * Compilers and compiled rules by what they depend on, the schema's text: a CRD is compiled when it
 * is checked, again when its kind is built and on every update, each time from new objects. Bounded:
 * cleared when full (a server sees a few hundred CRDs, not thousands of schemas).
 */
const CACHE_MAX = 2000;
const compilers = new Map<string, PolicyCompiler>();
const compiledRules = new Map<string, CompiledSchemaRule>();
const schemaTexts = new WeakMap<object, string>();

function schemaText(schema: CelSchema | undefined): string {
  if (!schema) return '';
  let text = schemaTexts.get(schema);
  if (text === undefined) schemaTexts.set(schema, (text = JSON.stringify(schema)));
  return text;
}

function remember<T>(cache: Map<string, T>, key: string, value: T): T {
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, value);
  return value;
}

/** One compiler per schema (and per kind of oldSelf): rules on the same schema share its checker. */
function compilerFor(schema: CelSchema | undefined, optionalOldSelf: boolean): PolicyCompiler {
  const key = `${optionalOldSelf}\0${schemaText(schema)}`;
  const hit = compilers.get(key);
  if (hit) return hit;
  const schemas = { ...(schema ? { object: schema } : {}), ...(optionalOldSelf ? { optionalOldSelf } : {}) };
  return remember(compilers, key, new PolicyCompiler({ kind: 'schemaRule', schemas, costLimit: Number.POSITIVE_INFINITY }));
}

/** Whether an expression names oldSelf (as an identifier, not a field or a string). */
const readsOldSelf = (expression: string): boolean => tokenize(expression).some((t, i, all) => t.kind === 'ident' && t.text === 'oldSelf' && all[i - 1]?.text !== '.');

/**
 * Compiles one rule at fieldPath (`…x-kubernetes-validations[0]`): errors name `.rule` or
 * `.messageExpression` below it, in Kubernetes' words.
 */
export function compileSchemaRule(rule: { rule: string; messageExpression?: string; optionalOldSelf?: boolean }, schema: CelSchema | undefined, fieldPath: string): SchemaRuleResult {
  const key = `${rule.optionalOldSelf === true}\0${rule.rule}\0${rule.messageExpression ?? ''}\0${schemaText(schema)}`;
  const hit = compiledRules.get(key);
  if (hit) return { ok: true, rule: hit };
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
  const ok: CompiledSchemaRule = {
    program: compiled.program,
    usesOldSelf,
    optionalOldSelf: rule.optionalOldSelf === true,
    ...(message ? { message } : {}),
    cost: compiled.program.estimatedCost,
    messageCost: message?.estimatedCost ?? 0,
  };
  // Only what compiled is kept: an error names the place it was found at.
  return { ok: true, rule: remember(compiledRules, key, ok) };
}

/** What is left of an object's budget as its rules run. */
export interface RuleBudget {
  remaining: number;
  timeoutMs: number;
}

/**
 * The values the rules of one place in an object see: self and oldSelf, converted to CEL values once
 * for all the rules there (converting is most of what a rule costs).
 */
export class SchemaRuleScope {
  private plain: object | undefined;
  private optional: object | undefined;

  constructor(
    private readonly values: { self: unknown; oldSelf?: unknown },
    private readonly schema: CelSchema | undefined,
  ) {}

  /** The root variables of a rule: oldSelf an optional for an optionalOldSelf rule. */
  context(optionalOldSelf: boolean): object {
    if (!this.plain) {
      const old = this.values.oldSelf === undefined ? undefined : jsonToCel(this.values.oldSelf, this.schema, true);
      const self = jsonToCel(this.values.self, this.schema, true);
      this.plain = { self, oldSelf: old ?? null };
      this.optional = { self, oldSelf: old === undefined ? Optional.none() : Optional.of(old) };
    }
    return optionalOldSelf ? this.optional! : this.plain;
  }
}

/**
 * Runs a rule in its scope, charging the budget. Returns the result (true passes) or throws the
 * library's CelEvaluationError (CelCostLimitError past the call limit or the budget).
 */
export function runSchemaRule(rule: CompiledSchemaRule, scope: SchemaRuleScope, budget: RuleBudget): unknown {
  return run(rule.program, scope.context(rule.optionalOldSelf), budget);
}

/** The rule's messageExpression in the same scope, under the same budget. */
export function runMessageExpression(rule: CompiledSchemaRule, scope: SchemaRuleScope, budget: RuleBudget): unknown {
  return rule.message ? run(rule.message, scope.context(rule.optionalOldSelf), budget) : undefined;
}

/**
 * One evaluation under the per-call limit, its cost taken from the object's budget afterwards (which
 * may go below zero: kube-apiserver refuses the rule that overdraws it as out of budget, not as over
 * the per-call limit).
 */
function run(program: CelProgram, context: object, budget: RuleBudget): unknown {
  const bounds: EvaluationBounds = { costLimit: SCHEMA_RULE_CALL_LIMIT, timeoutMs: budget.timeoutMs };
  const { value, cost } = measured(bounds, () => program.evaluate({ context, bounds }));
  budget.remaining -= cost;
  return value;
}
