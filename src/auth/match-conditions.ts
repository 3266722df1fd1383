/**
 * A webhook authorizer's matchConditions: CEL over `request`, the SubjectAccessReview spec in v1
 * form (Kubernetes' kubernetes.SubjectAccessReviewSpec). They are compiled once when the chain is
 * built (a condition that does not compile or is not a bool stops the start or the reload, naming
 * its field) and evaluated per request. As Kubernetes' matcher: the first false skips the webhook;
 * otherwise any error is the result (the failure policy decides); all true calls the webhook.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { declareSchemaType } from '../cel/admission-env.js';
import { withBounds } from '../cel/budget.js';
import { bindRegexCalls, DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT_MS, createCelEnvironment, jsonToCel, regexProblemText, type CelSchema } from '../cel/index.js';

const BOUNDS = { costLimit: DEFAULT_COST_LIMIT, timeoutMs: DEFAULT_TIMEOUT_MS };

const str: CelSchema = { type: 'string' };
const strings: CelSchema = { type: 'array', items: str };
const selector: CelSchema = {
  type: 'object',
  properties: { rawSelector: str, requirements: { type: 'array', items: { type: 'object', properties: { key: str, operator: str, values: strings } } } },
};
const SPEC_SCHEMA: CelSchema = {
  type: 'object',
  properties: {
    resourceAttributes: {
      type: 'object',
      properties: { namespace: str, verb: str, group: str, version: str, resource: str, subresource: str, name: str, fieldSelector: selector, labelSelector: selector },
    },
    nonResourceAttributes: { type: 'object', properties: { path: str, verb: str } },
    user: str,
    groups: strings,
    extra: { type: 'object', additionalProperties: strings },
    uid: str,
  },
};

let environments: { checker: Environment; evaluator: Environment } | undefined;

function envs(): { checker: Environment; evaluator: Environment } {
  if (!environments) {
    const base = createCelEnvironment();
    const checker = base.clone();
    checker.registerVariable('request', declareSchemaType(checker, 'kubernetes.SubjectAccessReviewSpec', SPEC_SCHEMA));
    const evaluator = base.clone();
    evaluator.registerVariable('request', 'dyn');
    environments = { checker, evaluator };
  }
  return environments;
}

export type MatchResult = { matches: true } | { matches: false } | { error: string };

export interface MatchConditions {
  evaluate(request: Record<string, unknown>): MatchResult;
}

/**
 * Compiles the conditions of the authorizer at `path` (`authorizers[0].webhook`); throws one
 * problem a line for every condition that does not compile or is not a bool. No conditions:
 * undefined (every request matches, and nothing needs to be built to say so).
 */
export function compileMatchConditions(conditions: readonly { expression: string }[], path: string): MatchConditions | undefined {
  if (conditions.length === 0) return undefined;
  const e = envs();
  const problems: string[] = [];
  const compiled = conditions.map(({ expression }, i) => {
    const checked = e.checker.check(expression);
    const field = `${path}.matchConditions[${i}].expression`;
    if (!checked.valid) {
      problems.push(`${field}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${checked.error?.summary.split('\n')[0] ?? 'does not compile'}`);
      return undefined;
    }
    if (checked.type !== 'bool' && checked.type !== 'dyn') problems.push(`${field}: Invalid value: ${JSON.stringify(expression)}: must evaluate to bool but got ${checked.type}`);
    const run = e.evaluator.parse(expression);
    const regexProblem = regexProblemText(bindRegexCalls(run.ast));
    if (regexProblem) problems.push(`${field}: Invalid value: ${JSON.stringify(expression)}: ${regexProblem}`);
    return { expression, run };
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const programs = compiled.filter((p) => p !== undefined);
  return {
    evaluate(request) {
      const vars: Record<string, unknown> = Object.create(null);
      vars.request = jsonToCel(request, SPEC_SCHEMA);
      const errors: string[] = [];
      for (const p of programs) {
        let value: unknown;
        try {
          value = withBounds(BOUNDS, () => p.run(vars));
        } catch (err) {
          errors.push(`cel evaluation error: expression '${p.expression}' resulted in error: ${(err as Error).message}`);
          continue;
        }
        if (typeof value !== 'boolean') errors.push(`cel evaluation error: expression '${p.expression}' eval result type should be bool`);
        else if (!value) return { matches: false };
      }
      return errors.length > 0 ? { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` } : { matches: true };
    },
  };
}
