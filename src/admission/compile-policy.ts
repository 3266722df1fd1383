/**
 * Admission policies compiled for one target kind. What both flavours share (failurePolicy,
 * variables, matchConditions) is compiled here; a ValidatingAdmissionPolicy adds its validations,
 * messageExpressions and auditAnnotations (compile-mutating-policy.ts adds a MutatingAdmissionPolicy's
 * mutations). Each expression is a program or the compile errors that make it fail at admission
 * time (an expression that does not compile is an error failurePolicy governs).
 */
import { fieldErrorText, PolicyCompiler, type CelProgram, type CelSchema, type CompileResult, type EnvKind } from '../cel/index.js';
import { listAt, objectAt, stringAt } from '../api/json-access.js';
import type { KubeObject } from '../api/types.js';

export type Compiled = { program: CelProgram; error?: undefined } | { program?: undefined; error: string };

export interface CompiledMatchCondition {
  name: string;
  expression: string;
  check: Compiled;
}

/** The parts every policy flavour has. */
export interface CompiledPolicyBase {
  failurePolicy: 'Fail' | 'Ignore';
  variables: ReadonlyMap<string, CelProgram>;
  matchConditions: CompiledMatchCondition[];
}

export interface CompiledValidation {
  expression: string;
  check: Compiled;
  message: string;
  messageExpression?: Compiled;
  /** Invalid when the policy names none (Kubernetes' default). */
  reason: string;
}

export interface CompiledAuditAnnotation {
  key: string;
  valueExpression: string;
  /** Yields the value (a string) or null for no annotation. */
  value: Compiled;
}

export interface CompiledPolicy extends CompiledPolicyBase {
  validations: CompiledValidation[];
  auditAnnotations: CompiledAuditAnnotation[];
}

export interface PolicySchemas {
  object?: CelSchema;
  params?: CelSchema;
  namespace?: CelSchema;
}

export const toCompiled = (r: CompileResult): Compiled => (r.ok ? { program: r.program } : { error: `compilation error: ${r.errors.map(fieldErrorText).join('; ')}` });

export const failurePolicyOf = (spec: unknown): 'Fail' | 'Ignore' => (stringAt(spec, 'failurePolicy') === 'Ignore' ? 'Ignore' : 'Fail');

/** A matchConditions list at fieldPath (`spec.matchConditions`, `webhooks[0].matchConditions`); webhooks use it too. */
export function compileConditions(compiler: PolicyCompiler, conditions: unknown[], fieldPath: string): CompiledMatchCondition[] {
  return conditions.map((m, i) => ({
    name: stringAt(m, 'name'),
    expression: stringAt(m, 'expression'),
    check: toCompiled(compiler.compile(stringAt(m, 'expression'), { fieldPath: `${fieldPath}[${i}].expression`, returns: ['bool'] })),
  }));
}

/**
 * Compiles the shared parts of a policy's spec and returns the compiler, with the policy's
 * variables declared, for the flavour's own expressions.
 */
export function compilePolicyBase(spec: unknown, kind: EnvKind, schemas: PolicySchemas): { compiler: PolicyCompiler; base: CompiledPolicyBase } {
  // kube-apiserver estimates no static cost when it compiles a policy for a request (its admission
  // plugins only bound the run): an unbounded list in the matched kind (a CRD's spec.versions) must
  // not turn a policy into a compilation error.
  const compiler = new PolicyCompiler({ kind, schemas, costLimit: Number.POSITIVE_INFINITY });
  listAt(spec, 'variables').forEach((v, i) => {
    compiler.declareVariable(stringAt(v, 'name'), stringAt(v, 'expression'), `spec.variables[${i}].expression`);
  });
  const matchConditions = compileConditions(compiler, listAt(spec, 'matchConditions'), 'spec.matchConditions');
  return { compiler, base: { failurePolicy: failurePolicyOf(spec), variables: compiler.variables, matchConditions } };
}

export function compilePolicy(policy: KubeObject, schemas: PolicySchemas): CompiledPolicy {
  const spec = objectAt(policy, 'spec');
  const { compiler, base } = compilePolicyBase(spec, 'validating', schemas);
  const validations = listAt(spec, 'validations').map((v, i): CompiledValidation => {
    const expression = stringAt(v, 'expression');
    const messageExpression = stringAt(v, 'messageExpression');
    return {
      expression,
      check: toCompiled(compiler.compile(expression, { fieldPath: `spec.validations[${i}].expression`, returns: ['bool'] })),
      message: stringAt(v, 'message'),
      ...(messageExpression ? { messageExpression: toCompiled(compiler.compile(messageExpression, { fieldPath: `spec.validations[${i}].messageExpression`, returns: ['string'] })) } : {}),
      reason: stringAt(v, 'reason') || 'Invalid',
    };
  });
  const auditAnnotations = listAt(spec, 'auditAnnotations').map((a, i): CompiledAuditAnnotation => {
    const valueExpression = stringAt(a, 'valueExpression');
    return {
      key: stringAt(a, 'key'),
      valueExpression,
      value: toCompiled(compiler.compile(valueExpression, { fieldPath: `spec.auditAnnotations[${i}].valueExpression`, returns: ['string', 'null'] })),
    };
  });
  return { ...base, validations, auditAnnotations };
}
