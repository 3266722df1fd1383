/**
 * The CEL environment of the authentication configuration, on the CEL room's base environment (its
 * Kubernetes libraries and runtime bounds): `claims` (the token's claims, map(string, dyn)) for
 * claim validation rules and claim mappings, `user` (authentication.k8s.io/v1 UserInfo: username,
 * uid, groups, extra) for user validation rules. Expressions are type-checked at start; a mapping
 * that must be a string or a rule that must be a bool is refused when its static type says otherwise.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { withBounds } from '../cel/budget.js';
import { bindRegexCalls, DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT_MS, celToJson, createCelEnvironment, jsonToCel, regexProblemText } from '../cel/index.js';
import type { ExpressionCompiler } from './claim-expressions.js';

const BOUNDS = { costLimit: DEFAULT_COST_LIMIT, timeoutMs: DEFAULT_TIMEOUT_MS };
/** The static types a string-or-list-of-strings mapping may have (dyn ones are checked when evaluated). */
const STRINGS: ReadonlySet<string> = new Set(['dyn', 'string', 'list<string>', 'list<dyn>', 'list']);

/** One checker per variable set (an undeclared variable is a compile error), one evaluator for all. */
let environments: { claims: Environment; user: Environment; evaluator: Environment } | undefined;

function envs(): { claims: Environment; user: Environment; evaluator: Environment } {
  if (!environments) {
    const base = createCelEnvironment();
    const claims = base.clone();
    claims.registerVariable('claims', 'map<string, dyn>');
    const user = base.clone();
    user.registerVariable('user', 'map<string, dyn>');
    const evaluator = base.clone();
    evaluator.registerVariable('claims', 'dyn');
    evaluator.registerVariable('user', 'dyn');
    environments = { claims, user, evaluator };
  }
  return environments;
}

export const celClaimsCompiler: ExpressionCompiler = {
  compile(expression, variable, returns) {
    const e = envs();
    const checked = e[variable].check(expression);
    if (!checked.valid) throw new Error(checked.error?.summary.split('\n')[0] ?? 'does not compile');
    const type = checked.type ?? 'dyn';
    if (returns === 'strings' && !STRINGS.has(type)) throw new Error('must evaluate to one of [string list(string)]');
    if (returns && returns !== 'strings' && type !== 'dyn' && type !== returns) throw new Error(`must evaluate to ${returns}, not ${type}`);
    const run = e.evaluator.parse(expression);
    const regexProblem = regexProblemText(bindRegexCalls(run.ast));
    if (regexProblem) throw new Error(regexProblem);
    return (vars) => {
      const ctx: Record<string, unknown> = Object.create(null);
      for (const [k, v] of Object.entries(vars)) ctx[k] = jsonToCel(v);
      return celToJson(withBounds(BOUNDS, () => run(ctx)));
    };
  },
};
