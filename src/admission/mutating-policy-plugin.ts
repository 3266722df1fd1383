/**
 * MutatingAdmissionPolicies on every CREATE and UPDATE, as Kubernetes' MutatingAdmissionPolicy
 * plugin runs them: for each (policy, binding, param) that applies (policy-dispatch.ts), the
 * matchConditions filter, then each mutation in order evaluates against the object as mutated so
 * far and is applied to it (the object is defaulted again after each). An error (a condition, an
 * expression, a patch that cannot apply, a mis-configured policy or binding) skips that mutation
 * and, under failurePolicy Fail, refuses the request once every policy has run.
 *
 * Reinvocation: a policy with reinvocationPolicy IfNeeded runs again in the reinvocation round when
 * the object changed after it ran, by a later policy or by a later plugin (webhooks); a policy with
 * Never runs once. DELETE has no object to mutate and is never handed to policies.
 */
import { Activation, type Authorizer, type CelAuthorizer } from '../cel/index.js';
import { immediateAuthorizer } from './cel-authorizer.js';
import { AdmissionError } from './errors.js';
import { qualified } from '../api/qualified.js';
import { jsonEqual, objectAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { StoreReads } from '../store/store.js';
import { applyMutation } from './apply-mutation.js';
import type { AdmissionAttributes } from './attributes.js';
import { failurePolicyOf } from './compile-policy.js';
import { compileMutatingPolicy, type CompiledMutatingPolicy } from './compile-mutating-policy.js';
import type { MutatingPass, MutatingPlugin } from './mutation.js';
import type { Operation } from './matching.js';
import { isAdmissionConfigurationKind, isConfigError, PolicyDispatcher } from './policy-dispatch.js';
import { errorText, matchConditionsOutcome, runExpression } from './policy-evaluation.js';
import { PolicyRegistry, type PolicyHook } from './policy-registry.js';

interface Failure {
  policy: KubeObject;
  /** Absent for a policy-level configuration error. */
  binding?: KubeObject;
  message: string;
  /** Kubernetes' reason: Invalid for evaluation errors, Forbidden for configuration errors. */
  reason: string;
}

export class MutatingPolicyPlugin implements MutatingPlugin {
  readonly registry: PolicyRegistry<CompiledMutatingPolicy>;
  readonly dispatcher: PolicyDispatcher;

  /** Answers the expressions' `authorizer` checks; without one, `authorizer` is null. */
  readonly authorizer: CelAuthorizer | undefined;

  constructor(store: StoreReads, kinds: readonly KindStrategy[], authorizer?: Authorizer) {
    this.authorizer = authorizer && immediateAuthorizer(authorizer);
    const find = (k: string) => kinds.find((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
    const policyKind = find('MutatingAdmissionPolicy');
    const bindingKind = find('MutatingAdmissionPolicyBinding');
    if (!policyKind || !bindingKind) throw new Error('mutating admission needs the MutatingAdmissionPolicy kinds');
    this.registry = new PolicyRegistry(store, policyKind, bindingKind, compileMutatingPolicy);
    this.dispatcher = new PolicyDispatcher(store, kinds);
  }

  begin(operation: Operation, kind: KindStrategy): MutatingPass | undefined {
    if (operation !== 'CREATE' && operation !== 'UPDATE') return undefined;
    if (isAdmissionConfigurationKind(kind)) return undefined;
    const { hooks } = this.registry.current();
    return hooks.length === 0 ? undefined : new PolicyPass(this, hooks);
  }
}

/** One request's run of the policies, remembering what the reinvocation round needs. */
class PolicyPass implements MutatingPass {
  /** The object as the policies last left it. */
  private lastOutput: KubeObject | undefined;
  /** IfNeeded invocations that ran and that nothing has changed the object after (yet). */
  private invoked = new Set<string>();
  /** IfNeeded invocations whose output a later mutation changed: they run in the reinvocation round. */
  private readonly reinvoke = new Set<string>();

  constructor(
    private readonly plugin: MutatingPolicyPlugin,
    private readonly hooks: readonly PolicyHook[],
  ) {}

  async run(attrs: AdmissionAttributes, object: KubeObject, reinvocation: boolean): Promise<KubeObject> {
    // A later plugin changed the object: every policy that asked for it runs again.
    if (reinvocation && !jsonEqual(this.lastOutput, object)) this.requireReinvocation();
    if (reinvocation && this.reinvoke.size === 0) return object;
    const { kind } = attrs;
    const failures: Failure[] = [];
    let current = object;
    for (const step of this.plugin.dispatcher.steps(this.hooks, attrs)) {
      if (isConfigError(step)) {
        failures.push({ policy: step.policy, binding: step.binding, message: step.message, reason: 'Forbidden' });
        continue;
      }
      const schemas = this.plugin.dispatcher.schemas(kind, step.paramKind);
      const compiled = this.plugin.registry.compiled(step.policy, kind, schemas);
      const fail = (message: string) => failures.push({ policy: step.policy, binding: step.binding, message, reason: 'Invalid' });
      for (const param of step.params) {
        const key = invocationKey(step.policy, step.binding, param);
        if (reinvocation && !this.reinvoke.has(key)) continue;
        const activation = () =>
          new Activation(
            {
              object: current,
              oldObject: attrs.oldObject,
              request: attrs.request,
              params: param,
              namespaceObject: attrs.namespaceObject ?? null,
              ...(this.plugin.authorizer ? { authorizer: this.plugin.authorizer } : {}),
            },
            { schemas, variables: compiled.variables },
          );
        const matched = matchConditionsOutcome(compiled.matchConditions, activation());
        if ('error' in matched) {
          fail(matched.error);
          continue;
        }
        if (!matched.matches) continue;
        const before = current;
        for (const m of compiled.mutations) {
          const r = runExpression(m.program, activation(), m.expression);
          if (r.error !== undefined) {
            fail(r.error);
            continue;
          }
          try {
            const next = applyMutation(m.patchType, r.value, current, kind.schema);
            if (next !== current) kind.applyDefaults(next);
            current = next;
          } catch (err) {
            fail(errorText(err));
          }
        }
        if (!jsonEqual(before, current)) this.requireReinvocation();
        if (compiled.reinvocationPolicy === 'IfNeeded') this.invoked.add(key);
      }
    }
    this.lastOutput = current;
    const refusing = failures.filter((f) => failurePolicyOf(objectAt(f.policy, 'spec')) === 'Fail');
    if (refusing.length > 0) throw denial(attrs, refusing);
    return current;
  }

  private requireReinvocation(): void {
    for (const k of this.invoked) this.reinvoke.add(k);
    this.invoked = new Set();
  }
}

/** An invocation is its policy, binding and param (names; a param also by namespace). */
const invocationKey = (policy: KubeObject, binding: KubeObject, param: KubeObject | null): string =>
  JSON.stringify([policy.metadata.name, binding.metadata.name, param?.metadata.namespace ?? '', param?.metadata.name ?? '']);

/**
 * Kubernetes' policy dispatcher refusal: a Forbidden status (403) about the object whose message is
 * the first failure's, with that failure's reason, and one cause per failure.
 */
function denial(a: AdmissionAttributes, failures: Failure[]): AdmissionError {
  const messages = failures.map((f) =>
    f.binding === undefined
      ? `policy ${JSON.stringify(f.policy.metadata.name ?? '')} denied request: ${f.message}`
      : `policy '${f.policy.metadata.name ?? ''}' with binding '${f.binding.metadata.name ?? ''}' denied request: ${f.message}`,
  );
  return new AdmissionError('PolicyDenied', messages[0], {
    target: qualified(a.kind, a.name),
    reason: failures[0].reason,
    causes: messages.map((message) => ({ message })),
  });
}
