/**
 * Validating admission policies on every write, as Kubernetes' ValidatingAdmissionPolicy plugin
 * runs them: for each binding (name order) whose policy exists, the policy's matchConstraints and
 * the binding's matchResources must match; params are resolved; matchConditions filter (any false:
 * skip; an error with none false: failurePolicy); then every validation runs. A false validation
 * is a failure with the policy's message and reason; an error is one when failurePolicy is Fail.
 * Each failure goes where the binding's validationActions say: Deny (the first one refuses the
 * request), Warn (a Warning header), Audit (not recorded yet: orchd has no audit log).
 */
import { Activation, CelCostLimitError, CelTimeoutError } from '../cel/index.js';
import { ApiError, forbidden, qualified } from '../api/status.js';
import { listAt, objectAt, stringsOf } from '../resources/json-access.js';
import type { KindStrategy } from '../resources/strategy.js';
import type { Store } from '../store/store.js';
import type { AdmissionAttributes } from './attributes.js';
import { compilePolicy, failurePolicyOf, type CompiledPolicy } from './compile-policy.js';
import { isAdmissionConfigurationKind, isConfigError, PolicyDispatcher } from './policy-dispatch.js';
import { matchConditionsOutcome, runExpression } from './policy-evaluation.js';
import { PolicyRegistry } from './policy-registry.js';
import { currentAdmissionContext } from './request-context.js';

interface Failure {
  policy: string;
  /** Absent for a policy-level configuration error. */
  binding?: string;
  message: string;
  reason: string;
}

/** Kubernetes' reasonToCode for a denial. */
const codeOf = (reason: string): number => ({ Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413 })[reason] ?? 422;

export class ValidatingAdmission {
  readonly registry: PolicyRegistry<CompiledPolicy>;
  private readonly dispatcher: PolicyDispatcher;

  constructor(store: Store, kinds: readonly KindStrategy[]) {
    const find = (k: string) => kinds.find((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
    const policyKind = find('ValidatingAdmissionPolicy');
    const bindingKind = find('ValidatingAdmissionPolicyBinding');
    if (!policyKind || !bindingKind) throw new Error('validating admission needs the ValidatingAdmissionPolicy kinds');
    this.registry = new PolicyRegistry(store, policyKind, bindingKind, compilePolicy);
    this.dispatcher = new PolicyDispatcher(store, kinds);
  }

  /** Throws the denial (an ApiError), adds warnings to the current request. */
  validate = async (a: AdmissionAttributes): Promise<void> => {
    const { kind, object, oldObject, request, name } = a;
    if (isAdmissionConfigurationKind(kind)) return;
    const snap = this.registry.current();
    if (snap.hooks.length === 0) return;
    const denied: Failure[] = [];
    const warnings: string[] = [];
    for (const step of this.dispatcher.steps(snap.hooks, a)) {
      const policyName = step.policy.metadata.name ?? '';
      const bindingName = step.binding?.metadata.name;
      if (isConfigError(step)) {
        // A mis-configured policy or binding refuses the request whatever the actions say (Kubernetes' addConfigError).
        if (failurePolicyOf(objectAt(step.policy, 'spec')) === 'Fail') denied.push({ policy: policyName, binding: bindingName, message: step.message, reason: 'Invalid' });
        continue;
      }
      const actions = stringsOf(listAt(objectAt(step.binding, 'spec'), 'validationActions'));
      const fail = (message: string, reason = 'Invalid') => {
        if (actions.includes('Deny')) denied.push({ policy: policyName, binding: bindingName, message, reason });
        if (actions.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
      };
      const schemas = this.dispatcher.schemas(kind, step.paramKind);
      const compiled = this.registry.compiled(step.policy, kind, schemas);
      for (const p of step.params) {
        const activation = new Activation({ object, oldObject, request, params: p, namespaceObject: a.namespaceObject ?? null }, { schemas, variables: compiled.variables });
        evaluatePolicy(compiled, activation, fail);
      }
    }
    currentAdmissionContext().warn(warnings);
    const first = denied[0];
    if (first) throw denial(kind, name, first);
  };
}

type Fail = (message: string, reason?: string) => void;

function evaluatePolicy(p: CompiledPolicy, act: Activation, fail: Fail): void {
  const onError = (message: string) => {
    if (p.failurePolicy === 'Fail') fail(message);
  };
  const matched = matchConditionsOutcome(p.matchConditions, act);
  if ('error' in matched) return onError(matched.error);
  if (!matched.matches) return;
  for (const v of p.validations) {
    const r = runExpression(v.check, act, v.expression);
    if (r.error !== undefined) {
      onError(r.error);
      continue;
    }
    if (r.value === true) continue;
    const m = messageOf(v, act);
    if ('error' in m) onError(m.error);
    else fail(m.message, v.reason);
  }
}

/** Kubernetes' MaxEvaluatedMessageExpressionSizeBytes: a longer evaluated message is not used. */
const MAX_MESSAGE_BYTES = 5 * 1024;

/**
 * The message of a failed validation: messageExpression when it yields one line of text, else
 * message, else the expression. A messageExpression out of budget is an error (failurePolicy).
 */
function messageOf(v: CompiledPolicy['validations'][number], act: Activation): { message: string } | { error: string } {
  const fallback = v.message.trim() || `failed expression: ${v.expression.trim()}`;
  if (!v.messageExpression?.program) return { message: fallback };
  try {
    const value = v.messageExpression.program.evaluate(act);
    if (typeof value !== 'string') return { message: fallback };
    const text = value.trim();
    if (!text || text.includes('\n') || Buffer.byteLength(text) > MAX_MESSAGE_BYTES) return { message: fallback };
    return { message: text };
  } catch (err) {
    if (err instanceof CelCostLimitError || err instanceof CelTimeoutError) return { error: `failed messageExpression: ${err.message}` };
    return { message: fallback };
  }
}

function denial(kind: KindStrategy, name: string, f: Failure): ApiError {
  const message =
    f.binding === undefined
      ? `ValidatingAdmissionPolicy '${f.policy}' denied request: ${f.message}`
      : `ValidatingAdmissionPolicy '${f.policy}' with binding '${f.binding}' denied request: ${f.message}`;
  const base = forbidden(qualified(kind, name), message).status;
  return new ApiError({ ...base, reason: f.reason, code: codeOf(f.reason), details: { ...base.details, causes: [{ message }] } });
}

