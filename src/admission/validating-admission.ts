/**
 * Validating admission policies on every write, as Kubernetes' ValidatingAdmissionPolicy plugin
 * runs them: for each binding (name order) whose policy exists, the policy's matchConstraints and
 * the binding's matchResources must match; params are resolved; matchConditions filter (any false:
 * skip; an error with none false: failurePolicy); then every validation runs, then every
 * auditAnnotation. A false validation is a failure with the policy's message and reason; an error
 * is one when failurePolicy is Fail. Each failure goes where the binding's validationActions say:
 * Deny (the first one refuses the request), Warn (a Warning header), Audit (the request's
 * `validation.policy.admission.orch.io/validation_failure` audit annotation). Audit annotations
 * are collected per policy over its bindings and params and recorded as `<policy>/<key>`.
 */
import { Activation, CelCostLimitError, CelTimeoutError, celTypeName, ConvertedValues, type Authorizer, type CelAuthorizer } from '../cel/index.js';
import { AdmissionError } from './errors.js';
import { qualified } from '../api/qualified.js';
import { listAt, objectAt, stringAt, stringsOf } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { StoreReads } from '../store/store.js';
import type { AdmissionAttributes } from './attributes.js';
import { compilePolicy, failurePolicyOf, type CompiledPolicy, type PolicySchemas } from './compile-policy.js';
import { isAdmissionConfigurationKind, isConfigError, PolicyDispatcher, type PolicyConfigError, type PolicyInvocation } from './policy-dispatch.js';
import { matchConditionsOutcome, runExpression } from './policy-evaluation.js';
import { PolicyRegistry, type PolicySnapshot } from './policy-registry.js';
import { evaluateWithAuthorizer } from './cel-authorizer.js';
import { currentAdmissionContext } from './request-context.js';

interface Failure {
  policy: string;
  /** Absent for a policy-level configuration error. */
  binding?: string;
  message: string;
  reason: string;
}

/** The audit annotation of a failure under an Audit validation action (Kubernetes' validation.policy.admission.k8s.io). */
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.orch.io/validation_failure';
/** Kubernetes' maxAuditAnnotationValueLength: a longer value is cut. */
const MAX_AUDIT_VALUE = 10 * 1024;

/** Kubernetes' reasonToCode for a denial. */
const codeOf = (reason: string): number => ({ Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413 })[reason] ?? 422;

export class ValidatingAdmission {
  readonly registry: PolicyRegistry<CompiledPolicy>;
  private readonly dispatcher: PolicyDispatcher;

  constructor(
    store: StoreReads,
    kinds: readonly KindStrategy[],
    /** Answers the expressions' `authorizer` checks; without one, `authorizer` is null. */
    private readonly authorizer?: Authorizer,
  ) {
    const find = (k: string) => kinds.find((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
    const policyKind = find('ValidatingAdmissionPolicy');
    const bindingKind = find('ValidatingAdmissionPolicyBinding');
    if (!policyKind || !bindingKind) throw new Error('validating admission needs the ValidatingAdmissionPolicy kinds');
    this.registry = new PolicyRegistry(store, policyKind, bindingKind, compilePolicy);
    this.dispatcher = new PolicyDispatcher(store, kinds);
  }

  /** Whether any policy can apply to a write of kind: when not, the write's attributes are never computed. */
  applies(kind: KindStrategy): boolean {
    return !isAdmissionConfigurationKind(kind) && this.registry.current().hooks.length > 0;
  }

  /** Throws the denial (an AdmissionError), adds warnings and audit annotations to the current request. */
  validate = async (a: AdmissionAttributes): Promise<void> => {
    if (!this.applies(a.kind)) return;
    const snap = this.registry.current();
    const ctx = currentAdmissionContext();
    const steps = this.prepare(a, snap);
    // With an authorizer, evaluation may run in rounds (cel-authorizer.ts): only the last one
    // counts. Expressions that never read `authorizer` cannot need one, so they evaluate once.
    const { denied, warnings, annotations } =
      this.authorizer && steps.some((s) => !isConfigError(s) && readsAuthorizer(s.compiled))
        ? await evaluateWithAuthorizer(this.authorizer, (authorizer) => this.evaluate(a, steps, authorizer))
        : this.evaluate(a, steps, undefined);
    for (const [key, value] of annotations) ctx.annotate(key, value);
    ctx.warn(warnings);
    const first = denied[0];
    if (first) throw denial(a.kind, a.name, first);
  };

  /** The request's steps with their compiled policies, once per request rather than once per round. */
  private prepare(a: AdmissionAttributes, snap: PolicySnapshot): PreparedStep[] {
    return this.dispatcher.steps(snap.hooks, a).map((step) => {
      if (isConfigError(step)) return step;
      const schemas = this.dispatcher.schemas(a.kind, step.paramKind);
      const compiled = this.registry.compiled(step.policy, a.kind, schemas);
      // Spelled out: spreading the step here showed up in profiles at more than a microsecond each.
      return { policy: step.policy, binding: step.binding, paramKind: step.paramKind, params: step.params, schemas, compiled };
    });
  }

  /** One evaluation of every matching policy and binding: its failures, warnings and audit annotations. */
  private evaluate(a: AdmissionAttributes, steps: readonly PreparedStep[], authorizer: CelAuthorizer | undefined): { denied: Failure[]; warnings: string[]; annotations: [string, string][] } {
    const { object, oldObject, request } = a;
    const namespaceObject = a.namespaceObject ?? null;
    const denied: Failure[] = [];
    const warnings: string[] = [];
    const annotations: [string, string][] = [];
    // One conversion of the request's objects to CEL values, shared by every policy.
    const converted = new ConvertedValues();
    // Audit annotation values per key over every binding and param of one policy; the same value once.
    let annotated: { policy: KubeObject; values: Map<string, string[]> } | undefined;
    const flushAnnotations = () => {
      for (const [key, values] of annotated?.values ?? []) annotations.push([`${annotated!.policy.metadata.name ?? ''}/${key}`, values.join(', ')]);
      annotated = undefined;
    };
    for (const step of steps) {
      if (annotated && annotated.policy !== step.policy) flushAnnotations();
      const policyName = step.policy.metadata.name ?? '';
      const bindingName = step.binding?.metadata.name;
      if (isConfigError(step)) {
        // A mis-configured policy or binding refuses the request whatever the actions say (Kubernetes' addConfigError).
        if (failurePolicyOf(objectAt(step.policy, 'spec')) === 'Fail') denied.push({ policy: policyName, binding: bindingName, message: step.message, reason: 'Invalid' });
        continue;
      }
      const bspec = objectAt(step.binding, 'spec');
      const actions = stringsOf(listAt(bspec, 'validationActions'));
      const values = (annotated ??= { policy: step.policy, values: new Map() }).values;
      const outcome: Outcome = {
        fail: (message, reason, expressionIndex) => {
          if (actions.includes('Deny')) denied.push({ policy: policyName, binding: bindingName, message, reason });
          if (actions.includes('Audit')) {
            const value = [{ message, policy: stringAt(bspec, 'policyName'), binding: bindingName, expressionIndex, validationActions: actions }];
            annotations.push([VALIDATION_FAILURE_ANNOTATION, JSON.stringify(value)]);
          }
          if (actions.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
        },
        deny: (message) => denied.push({ policy: policyName, binding: bindingName, message, reason: 'Invalid' }),
        annotate: (key, value) => {
          const list = values.get(key) ?? [];
          const cut = value.length > MAX_AUDIT_VALUE ? value.slice(0, MAX_AUDIT_VALUE) : value;
          if (!list.includes(cut)) values.set(key, [...list, cut]);
        },
      };
      const { compiled, schemas } = step;
      for (const params of step.params) {
        const input = authorizer ? { object, oldObject, request, params, namespaceObject, authorizer } : { object, oldObject, request, params, namespaceObject };
        evaluatePolicy(compiled, new Activation(input, { schemas, variables: compiled.variables, converted }), outcome);
      }
    }
    flushAnnotations();
    return { denied, warnings, annotations };
  }
}

/** A step of the request, with what its evaluation needs looked up. */
type PreparedStep = PolicyConfigError | (PolicyInvocation & { schemas: PolicySchemas; compiled: CompiledPolicy });

/** Whether any expression of a policy may read `authorizer`; known per compiled policy. */
const authorizerReaders = new WeakMap<CompiledPolicy, boolean>();
function readsAuthorizer(p: CompiledPolicy): boolean {
  let reads = authorizerReaders.get(p);
  if (reads === undefined) {
    const all = [...p.matchConditions.map((m) => m.check), ...p.validations.flatMap((v) => [v.check, v.messageExpression]), ...p.auditAnnotations.map((a) => a.value)];
    reads = all.some((c) => c?.program?.needs.authorizer === true);
    authorizerReaders.set(p, reads);
  }
  return reads;
}

/** Where one evaluation's results go (one binding, one param). */
interface Outcome {
  /** A failed validation (or an error under failurePolicy Fail), with the index Kubernetes audits. */
  fail(message: string, reason: string, expressionIndex: number): void;
  /** An auditAnnotation that errs under failurePolicy Fail or yields neither string nor null: refused whatever the actions. */
  deny(message: string): void;
  annotate(key: string, value: string): void;
}

function evaluatePolicy(p: CompiledPolicy, act: Activation, out: Outcome): void {
  const onError = (message: string, index: number) => {
    if (p.failurePolicy === 'Fail') out.fail(message, 'Invalid', index);
  };
  const matched = matchConditionsOutcome(p.matchConditions, act);
  if ('error' in matched) return onError(matched.error, 0);
  if (!matched.matches) return;
  p.validations.forEach((v, i) => {
    const r = runExpression(v.check, act, v.expression);
    if (r.error !== undefined) return onError(r.error, i);
    if (r.value === true) return;
    const m = messageOf(v, act);
    if ('error' in m) onError(m.error, i);
    else out.fail(m.message, v.reason, i);
  });
  for (const a of p.auditAnnotations) {
    const r = runExpression(a.value, act, a.valueExpression);
    if (r.error !== undefined) {
      if (p.failurePolicy === 'Fail') out.deny(r.error);
    } else if (typeof r.value === 'string') {
      // A blank value, like null, adds no annotation.
      if (r.value.trim()) out.annotate(a.key, r.value.trim());
    } else if (r.value !== null) {
      out.deny(`valueExpression '${a.valueExpression}' resulted in unsupported return type: ${celTypeName(r.value)}. Return type must be either string or null.`);
    }
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

function denial(kind: KindStrategy, name: string, f: Failure): AdmissionError {
  const message =
    f.binding === undefined
      ? `ValidatingAdmissionPolicy '${f.policy}' denied request: ${f.message}`
      : `ValidatingAdmissionPolicy '${f.policy}' with binding '${f.binding}' denied request: ${f.message}`;
  return new AdmissionError('Forbidden', message, { target: qualified(kind, name), reason: f.reason, status: codeOf(f.reason), causes: [{ message }] });
}
