/**
 * The CEL side of a JWT authenticator: claimValidationRules[].expression, the expression forms of
 * claimMappings (username, groups, uid, extra[].valueExpression) and userValidationRules. They are
 * compiled once when the authenticator is built (a compile error stops the start, as in
 * kube-apiserver) and evaluated per token with `claims` (or `user`) bound.
 *
 * The compiler is given from outside (the CEL room); without one, a configuration that uses any
 * expression is refused at start with every such field named, never silently skipped.
 */
import type { JWTAuthenticator } from '../config/authentication.js';
import { ClaimError, type Claims } from './claims.js';
import type { UserInfo } from './user.js';

/** A compiled expression: evaluates with the given variables, returns a plain JS value (string, boolean, array, object, null). */
export type Program = (vars: Record<string, unknown>) => unknown;

/**
 * The static type an expression must have: a string (username, uid), a bool (rules), or a string or
 * list of strings (groups, extra values), as Kubernetes' expression accessors declare them.
 */
export type ReturnType = 'string' | 'bool' | 'strings';

export interface ExpressionCompiler {
  /**
   * Compiles over one variable (`claims`, or `user` for user validation rules); throws with a
   * message when the expression does not compile or its static type is not `returns`.
   */
  compile(expression: string, variable: 'claims' | 'user', returns?: ReturnType): Program;
}

export interface JwtExpressions {
  username?: Program;
  groups?: Program;
  uid?: Program;
  extra: { key: string; expression: string; program: Program }[];
  claimRules: { expression: string; message: string; program: Program }[];
  userRules: { expression: string; message: string; program: Program }[];
}

/** Field paths (under `jwt[i]`) of every expression an authenticator uses. */
function expressionFields(a: JWTAuthenticator): { field: string; expression: string }[] {
  const out: { field: string; expression: string }[] = [];
  const m = a.claimMappings;
  if (m.username.expression) out.push({ field: 'claimMappings.username.expression', expression: m.username.expression });
  if (m.groups?.expression) out.push({ field: 'claimMappings.groups.expression', expression: m.groups.expression });
  if (m.uid?.expression) out.push({ field: 'claimMappings.uid.expression', expression: m.uid.expression });
  m.extra.forEach((e, i) => out.push({ field: `claimMappings.extra[${i}].valueExpression`, expression: e.valueExpression }));
  a.claimValidationRules.forEach((r, i) => {
    if ('expression' in r) out.push({ field: `claimValidationRules[${i}].expression`, expression: r.expression });
  });
  a.userValidationRules.forEach((r, i) => out.push({ field: `userValidationRules[${i}].expression`, expression: r.expression }));
  return out;
}

/**
 * Compiles every expression of one authenticator. Throws one error naming each field that failed
 * (`jwt[0].claimMappings.username.expression: …`).
 */
export function compileJwtExpressions(a: JWTAuthenticator, compiler: ExpressionCompiler | undefined, path: string): JwtExpressions {
  const fields = expressionFields(a);
  const empty: JwtExpressions = { extra: [], claimRules: [], userRules: [] };
  if (fields.length === 0) return empty;
  if (!compiler) {
    throw new Error(fields.map((f) => `${path}.${f.field}: Unsupported value: CEL expressions in the authentication configuration are not supported yet by this server`).join('\n'));
  }
  const problems: string[] = [];
  const compile = (field: string, expression: string, variable: 'claims' | 'user', returns?: ReturnType): Program => {
    try {
      return compiler.compile(expression, variable, returns);
    } catch (err) {
      problems.push(`${path}.${field}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(err as Error).message}`);
      return () => undefined;
    }
  };
  const m = a.claimMappings;
  const out: JwtExpressions = {
    ...(m.username.expression ? { username: compile('claimMappings.username.expression', m.username.expression, 'claims', 'string') } : {}),
    ...(m.groups?.expression ? { groups: compile('claimMappings.groups.expression', m.groups.expression, 'claims', 'strings') } : {}),
    ...(m.uid?.expression ? { uid: compile('claimMappings.uid.expression', m.uid.expression, 'claims', 'string') } : {}),
    extra: m.extra.map((e, i) => ({ key: e.key, expression: e.valueExpression, program: compile(`claimMappings.extra[${i}].valueExpression`, e.valueExpression, 'claims', 'strings') })),
    claimRules: a.claimValidationRules.flatMap((r, i) =>
      'expression' in r ? [{ expression: r.expression, message: r.message ?? '', program: compile(`claimValidationRules[${i}].expression`, r.expression, 'claims', 'bool') }] : [],
    ),
    userRules: a.userValidationRules.map((r, i) => ({ expression: r.expression, message: r.message ?? '', program: compile(`userValidationRules[${i}].expression`, r.expression, 'user', 'bool') })),
  };
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return out;
}

function run(p: Program, vars: Record<string, unknown>, what: string): unknown {
  try {
    return p(vars);
  } catch (err) {
    throw new ClaimError(`oidc: error evaluating ${what}: ${(err as Error).message}`);
  }
}

export function evalString(p: Program, claims: Claims, what: 'username' | 'uid'): string {
  const v = run(p, { claims }, `${what} claim expression`);
  if (typeof v !== 'string') throw new ClaimError(`oidc: error evaluating ${what} claim expression: ${what} claim expression must return a string`);
  return v;
}

/** A string or list of strings; '', [] and null are nothing; empty strings in a list are dropped. */
export function evalStringList(p: Program, claims: Claims, what: string): string[] {
  const v = run(p, { claims }, what);
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (Array.isArray(v) && v.every((e) => typeof e === 'string')) return (v as string[]).filter((e) => e !== '');
  throw new ClaimError(`oidc: error evaluating ${what}: expression must return a string or a list of strings`);
}

export function evalExtra(x: JwtExpressions, claims: Claims): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  for (const e of x.extra) {
    const values = evalStringList(e.program, claims, `extra claim expression: ${e.expression}`);
    if (values.length > 0) extra[e.key] = values;
  }
  return extra;
}

function checkRules(rules: JwtExpressions['claimRules'], vars: Record<string, unknown>, what: string): void {
  for (const r of rules) {
    const v = run(r.program, vars, what);
    if (typeof v !== 'boolean') throw new ClaimError(`oidc: error evaluating ${what}: validation expression must return a boolean`);
    if (!v) throw new ClaimError(`oidc: error evaluating ${what}: validation expression '${r.expression}' failed: ${r.message}`);
  }
}

export const checkClaimRules = (x: JwtExpressions, claims: Claims): void => checkRules(x.claimRules, { claims }, 'claim validation expression');

/** The user as authentication.k8s.io/v1 UserInfo, which user validation rules see. */
export const checkUserRules = (x: JwtExpressions, user: UserInfo): void =>
  checkRules(x.userRules, { user: { username: user.username, uid: user.uid, groups: user.groups, extra: user.extra } }, 'user info validation rule');
