/**
 * A ValidatingAdmissionPolicy compiled for one target kind: its variables, matchConditions,
 * validations and messageExpressions, each a program or the compile errors that make it fail at
 * admission time (an expression that does not compile is an error failurePolicy governs).
 */
import { PolicyCompiler, type CelProgram, type CelSchema } from '../cel/index.js';
import { listAt, objectAt, stringAt } from '../resources/json-access.js';
import type { KubeObject } from '../resources/types.js';
import { compileConditions, compileExpression, type Compiled, type CompiledCondition } from './expressions.js';

export interface CompiledValidation {
  expression: string;
  check: Compiled;
  message: string;
  messageExpression?: Compiled;
  /** Invalid when the policy names none (Kubernetes' default). */
  reason: string;
}

export interface CompiledPolicy {
  failurePolicy: 'Fail' | 'Ignore';
  variables: ReadonlyMap<string, CelProgram>;
  matchConditions: CompiledCondition[];
  validations: CompiledValidation[];
}

export interface PolicySchemas {
  object?: CelSchema;
  params?: CelSchema;
  namespace?: CelSchema;
}

export function compilePolicy(policy: KubeObject, schemas: PolicySchemas): CompiledPolicy {
  const spec = objectAt(policy, 'spec');
  const compiler = new PolicyCompiler({ kind: 'validating', schemas });
  listAt(spec, 'variables').forEach((v, i) => {
    compiler.declareVariable(stringAt(v, 'name'), stringAt(v, 'expression'), `spec.variables[${i}].expression`);
  });
  const matchConditions = compileConditions(compiler, listAt(spec, 'matchConditions'), 'spec.matchConditions');
  const validations = listAt(spec, 'validations').map((v, i): CompiledValidation => {
    const expression = stringAt(v, 'expression');
    const messageExpression = stringAt(v, 'messageExpression');
    return {
      expression,
      check: compileExpression(compiler, expression, { fieldPath: `spec.validations[${i}].expression`, returns: ['bool'] }),
      message: stringAt(v, 'message'),
      ...(messageExpression
        ? { messageExpression: compileExpression(compiler, messageExpression, { fieldPath: `spec.validations[${i}].messageExpression`, returns: ['string'] }) }
        : {}),
      reason: stringAt(v, 'reason') || 'Invalid',
    };
  });
  return { failurePolicy: stringAt(spec, 'failurePolicy') === 'Ignore' ? 'Ignore' : 'Fail', variables: compiler.variables, matchConditions, validations };
}
