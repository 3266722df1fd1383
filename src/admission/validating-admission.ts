/**
 * Validating admission policies on every write, as Kubernetes' ValidatingAdmissionPolicy plugin
 * runs them: for each binding (name order) whose policy exists, the policy's matchConstraints and
 * the binding's matchResources must match; params are resolved; matchConditions filter (any false:
 * skip; an error with none false: failurePolicy); then every validation runs. A false validation
 * is a failure with the policy's message and reason; an error is one when failurePolicy is Fail.
 * Each failure goes where the binding's validationActions say: Deny (the first one refuses the
 * request), Warn (a Warning header), Audit (not recorded yet: orchd has no audit log).
 */
import type { Authorizer } from '../auth/authorizer.js';
import { Activation, CelCostLimitError, CelEvaluationError, CelTimeoutError, type CelAuthorizer } from '../cel/index.js';
import { ApiError, forbidden, qualified } from '../api/status.js';
import { isObject, listAt, objectAt, stringAt, stringsOf } from '../resources/json-access.js';
import { kindByGroupVersionKind } from '../resources/registry.js';
import type { KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { matchesLabels } from '../store/label-selector.js';
import { collectionOf, storageKey, suffixOf } from '../store/keys.js';
import type { Store } from '../store/store.js';
import type { Compiled, CompiledPolicy } from './compile-policy.js';
import { selectorRequirements } from './label-selector.js';
import type { AdmissionAttributes } from './attributes.js';
import { matchesResources } from './matching.js';
import { PolicyRegistry } from './policy-registry.js';
import { evaluateWithAuthorizer } from './cel-authorizer.js';
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
  readonly registry: PolicyRegistry;
  private readonly namespaceKind: KindStrategy | undefined;

  constructor(
    private readonly store: Store,
    private readonly kinds: readonly KindStrategy[],
    /** Answers the expressions' `authorizer` checks; without one, `authorizer` is null. */
    private readonly authorizer?: Authorizer,
  ) {
    const find = (k: string) => kinds.find((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
    const policyKind = find('ValidatingAdmissionPolicy');
    const bindingKind = find('ValidatingAdmissionPolicyBinding');
    if (!policyKind || !bindingKind) throw new Error('validating admission needs the ValidatingAdmissionPolicy kinds');
    this.registry = new PolicyRegistry(store, policyKind, bindingKind);
    this.namespaceKind = kinds.find((k) => k.group === '' && k.kind === 'Namespace');
  }

  /** Throws the denial (an ApiError), adds warnings to the current request. */
  validate = async (a: AdmissionAttributes): Promise<void> => {
    const { kind, name } = a;
    // Kubernetes never runs these policies on the admissionregistration kinds themselves.
    if (kind.group.startsWith('admissionregistration.')) return;
    const snap = this.registry.current();
    if (snap.hooks.length === 0) return;
    const ctx = currentAdmissionContext();
    const { denied, warnings } = this.authorizer
      ? await evaluateWithAuthorizer(this.authorizer, (authorizer) => this.evaluate(a, snap, authorizer))
      : this.evaluate(a, snap, undefined);
    ctx.warn(warnings);
    const first = denied[0];
    if (first) throw denial(kind, name, first);
  };

  /** One evaluation of every matching policy and binding: the failures and warnings it produces. */
  private evaluate(a: AdmissionAttributes, snap: ReturnType<PolicyRegistry['current']>, authorizer: CelAuthorizer | undefined): { denied: Failure[]; warnings: string[] } {
    const { kind, object, oldObject, request, namespace } = a;
    const attrs = a.match;
    const nsObject = a.namespaceObject;
    const denied: Failure[] = [];
    const warnings: string[] = [];
    const schemasFor = (paramKind: KindStrategy | undefined) => ({
      object: kind.schema,
      ...(paramKind ? { params: paramKind.schema } : {}),
      ...(this.namespaceKind ? { namespace: this.namespaceKind.schema } : {}),
    });
    for (const { policy, bindings } of snap.hooks) {
      const pspec = objectAt(policy, 'spec');
      const failurePolicy = stringAt(pspec, 'failurePolicy') === 'Ignore' ? 'Ignore' : 'Fail';
      const policyName = policy.metadata.name ?? '';
      // A mis-configured policy or binding refuses the request whatever the actions say (Kubernetes' addConfigError).
      const configError = (err: unknown, bindingName?: string) => {
        if (failurePolicy === 'Ignore') return;
        denied.push({ policy: policyName, binding: bindingName, message: `failed to configure ${bindingName === undefined ? 'policy' : 'binding'}: ${errorText(err)}`, reason: 'Invalid' });
      };
      let paramKind: KindStrategy | undefined;
      try {
        if (!matchesResources(objectAt(pspec, 'matchConstraints'), attrs)) continue;
        paramKind = this.paramKind(pspec);
      } catch (err) {
        configError(err);
        continue;
      }
      for (const binding of bindings) {
        const bspec = objectAt(binding, 'spec');
        const bindingName = binding.metadata.name ?? '';
        const actions = stringsOf(listAt(bspec, 'validationActions'));
        const fail = (message: string, reason = 'Invalid') => {
          if (actions.includes('Deny')) denied.push({ policy: policyName, binding: bindingName, message, reason });
          if (actions.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
        };
        let params: unknown[];
        try {
          if (!matchesResources(objectAt(bspec, 'matchResources'), attrs)) continue;
          params = this.params(paramKind, bspec, namespace);
        } catch (err) {
          configError(err, bindingName);
          continue;
        }
        if (params.length === 0) continue;
        const schemas = schemasFor(paramKind);
        const compiled = this.registry.compiled(policy, kind, schemas);
        for (const p of params) {
          const activation = new Activation(
            { object, oldObject, request, params: p, namespaceObject: nsObject ?? null, ...(authorizer ? { authorizer } : {}) },
            { schemas, variables: compiled.variables },
          );
          evaluatePolicy(compiled, activation, fail);
        }
      }
    }
    return { denied, warnings };
  }

  /** The policy's paramKind as a served kind; a kind orchd does not serve mis-configures the policy. */
  private paramKind(pspec: unknown): KindStrategy | undefined {
    const pk = objectAt(pspec, 'paramKind');
    if (!pk) return undefined;
    const apiVersion = stringAt(pk, 'apiVersion');
    const slash = apiVersion.indexOf('/');
    const k = kindByGroupVersionKind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), stringAt(pk, 'kind'));
    if (!k || !this.kinds.includes(k)) throw new Error(`failed to find resource referenced by paramKind: '${apiVersion}, Kind=${stringAt(pk, 'kind')}'`);
    return k;
  }

  /**
   * The params each evaluation sees (Kubernetes' CollectParams): [null] without paramKind or
   * paramRef; none found is an error under parameterNotFoundAction Deny and no evaluation under Allow.
   */
  private params(paramKind: KindStrategy | undefined, bspec: unknown, requestNamespace: string): unknown[] {
    const ref = objectAt(bspec, 'paramRef');
    if (!paramKind || !ref) return [null];
    let ns = '';
    if (paramKind.namespaced) {
      ns = stringAt(ref, 'namespace') || requestNamespace;
      if (!ns) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    } else if (stringAt(ref, 'namespace')) {
      throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    }
    let found: KubeObject[];
    const name = stringAt(ref, 'name');
    if (name) {
      const s = this.store.get(storageKey(paramKind, ns, name));
      found = s ? [s.obj] : [];
    } else {
      const reqs = selectorRequirements(ref.selector);
      found = [...this.store.list(collectionOf(paramKind), paramKind.namespaced ? suffixOf(ns, '') : '')]
        .map((s) => s.obj)
        .filter((o) => matchesLabels(reqs, isObject(o.metadata.labels) ? o.metadata.labels : {}));
    }
    if (found.length === 0 && stringAt(ref, 'parameterNotFoundAction') === 'Deny') throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
    return found;
  }
}

type Fail = (message: string, reason?: string) => void;

function evaluatePolicy(p: CompiledPolicy, act: Activation, fail: Fail): void {
  const onError = (message: string) => {
    if (p.failurePolicy === 'Fail') fail(message);
  };
  // matchConditions: any false skips the policy; otherwise an error is a failure (failurePolicy).
  // Every condition runs (as Kubernetes' matcher does); the errors are reported together.
  const conditionErrors: string[] = [];
  for (const m of p.matchConditions) {
    const r = run(m.check, act, m.expression);
    if (r.error !== undefined) conditionErrors.push(r.error);
    else if (r.value === false) return;
  }
  if (conditionErrors.length > 0) return onError(conditionErrors.length === 1 ? conditionErrors[0] : `[${conditionErrors.join(', ')}]`);
  for (const v of p.validations) {
    const r = run(v.check, act, v.expression);
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

/** Evaluates a compiled expression; errors worded as Kubernetes' CEL filter words them. */
function run(c: Compiled, act: Activation, expression: string): { value?: unknown; error?: string } {
  if (c.error !== undefined) return { error: c.error };
  try {
    return { value: c.program.evaluate(act) };
  } catch (err) {
    const text = err instanceof CelEvaluationError ? err.message : errorText(err);
    return { error: `expression '${expression}' resulted in error: ${text}` };
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

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
