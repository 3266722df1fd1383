/**
 * A MutatingAdmissionPolicy compiled for one target kind: the shared parts (failurePolicy,
 * variables, matchConditions) and each mutation's expression, in the mutating environment where
 * `Object{…}` and `JSONPatch{…}` construct values. An ApplyConfiguration expression must yield an
 * Object, a JSONPatch one a list of JSONPatch; any other type is a compile error, reported (as
 * every compile error) when the policy is used.
 */
import { listAt, objectAt, stringAt } from '../api/json-access.js';
import type { KubeObject } from '../api/types.js';
import { compilePolicyBase, toCompiled, type Compiled, type CompiledPolicyBase, type PolicySchemas } from './compile-policy.js';

export type PatchType = 'ApplyConfiguration' | 'JSONPatch';

export interface CompiledMutation {
  patchType: PatchType;
  expression: string;
  program: Compiled;
}

export interface CompiledMutatingPolicy extends CompiledPolicyBase {
  reinvocationPolicy: 'Never' | 'IfNeeded';
  mutations: CompiledMutation[];
}

/**
 * The checked types each patch type accepts. A constructed object checks as `map` (the library
 * has no struct types); a list of JSONPatch as a list of dyn maps; an empty list as `list<T>`.
 */
const ACCEPTS: Record<PatchType, { name: string; types: ReadonlySet<string> }> = {
  ApplyConfiguration: { name: 'Object', types: new Set(['map', 'dyn']) },
  JSONPatch: { name: 'list(JSONPatch)', types: new Set(['list<map<dyn, dyn>>', 'list<dyn>', 'list<T>', 'dyn']) },
};

/** cel-go spells parameterized types with parentheses: list(int), map(string, string). */
const celGoTypeName = (t: string): string => t.replace(/</g, '(').replace(/>/g, ')');

export function compileMutatingPolicy(policy: KubeObject, schemas: PolicySchemas): CompiledMutatingPolicy {
  const spec = objectAt(policy, 'spec');
  const { compiler, base } = compilePolicyBase(spec, 'mutating', schemas);
  const mutations = listAt(spec, 'mutations').map((m, i): CompiledMutation => {
    const patchType: PatchType = stringAt(m, 'patchType') === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration';
    const field = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
    const expression = stringAt(objectAt(m, field), 'expression');
    const r = compiler.compile(expression, { fieldPath: `spec.mutations[${i}].${field}.expression` });
    const accepts = ACCEPTS[patchType];
    if (r.ok && !accepts.types.has(r.program.resultType)) {
      return { patchType, expression, program: { error: `must evaluate to ${accepts.name} but got ${celGoTypeName(r.program.resultType)}` } };
    }
    return { patchType, expression, program: toCompiled(r) };
  });
  return { ...base, reinvocationPolicy: stringAt(spec, 'reinvocationPolicy') === 'IfNeeded' ? 'IfNeeded' : 'Never', mutations };
}
