/**
 * Which (policy, binding, params) triples apply to a request, as Kubernetes' generic policy
 * dispatcher picks them for both policy flavours: for each policy (name order) whose
 * matchConstraints match, each of its bindings (name order) whose matchResources match, with the
 * params its paramRef selects. A policy or binding that cannot be read is a configuration error in
 * the same order, for the flavour to hand to failurePolicy.
 */
import { isObject, objectAt, stringAt } from '../api/json-access.js';
import { kindIndex } from '../api/kind-index.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { matchesLabels } from '../selectors/label-selector.js';
import { collectionOf, storageKey, suffixOf } from '../api/object-keys.js';
import type { StoreReads } from '../store/store.js';
import type { AdmissionAttributes } from './attributes.js';
import type { PolicySchemas } from './compile-policy.js';
import { selectorRequirements } from '../resources/label-selector-object.js';
import { matchesResources } from './matching.js';
import { errorText } from './policy-evaluation.js';
import type { PolicyHook } from './policy-registry.js';

/** A binding that applies, with the params to evaluate its policy with (null: none). */
export interface PolicyInvocation {
  policy: KubeObject;
  binding: KubeObject;
  paramKind: KindStrategy | undefined;
  params: readonly (KubeObject | null)[];
}

/** A policy (no binding) or binding that could not be read: `failed to configure …`. */
export interface PolicyConfigError {
  policy: KubeObject;
  binding?: KubeObject;
  message: string;
}

export type PolicyStep = PolicyInvocation | PolicyConfigError;

export const isConfigError = (s: PolicyStep): s is PolicyConfigError => 'message' in s;

/**
 * Kubernetes never runs admission policies (or webhooks) on the admission configuration kinds
 * themselves, so no policy can lock out its own repair.
 */
export const isAdmissionConfigurationKind = (kind: KindStrategy): boolean => kind.group.startsWith('admissionregistration.');

export class PolicyDispatcher {
  private readonly namespaceKind: KindStrategy | undefined;

  constructor(
    private readonly store: StoreReads,
    private readonly kinds: readonly KindStrategy[],
  ) {
    this.namespaceKind = kinds.find((k) => k.group === '' && k.kind === 'Namespace');
  }

  /** The schemas a policy's expressions are typed and converted with, for one target kind. */
  schemas(target: KindStrategy, paramKind: KindStrategy | undefined): PolicySchemas {
    return {
      object: target.schema,
      ...(paramKind ? { params: paramKind.schema } : {}),
      ...(this.namespaceKind ? { namespace: this.namespaceKind.schema } : {}),
    };
  }

  /** The steps of a request, in Kubernetes' order; bindings whose params are all missing drop out. */
  steps(hooks: readonly PolicyHook[], a: AdmissionAttributes): PolicyStep[] {
    const out: PolicyStep[] = [];
    for (const { policy, bindings } of hooks) {
      const pspec = objectAt(policy, 'spec');
      let paramKind: KindStrategy | undefined;
      try {
        if (!matchesResources(objectAt(pspec, 'matchConstraints'), a.match)) continue;
        paramKind = this.paramKind(pspec);
      } catch (err) {
        out.push({ policy, message: `failed to configure policy: ${errorText(err)}` });
        continue;
      }
      for (const binding of bindings) {
        const bspec = objectAt(binding, 'spec');
        try {
          if (!matchesResources(objectAt(bspec, 'matchResources'), a.match)) continue;
          const params = this.params(paramKind, bspec, a.namespace);
          if (params.length > 0) out.push({ policy, binding, paramKind, params });
        } catch (err) {
          out.push({ policy, binding, message: `failed to configure binding: ${errorText(err)}` });
        }
      }
    }
    return out;
  }

  /** The policy's paramKind as a served kind; a kind orchd does not serve mis-configures the policy. */
  private paramKind(pspec: unknown): KindStrategy | undefined {
    const pk = objectAt(pspec, 'paramKind');
    if (!pk) return undefined;
    const apiVersion = stringAt(pk, 'apiVersion');
    const k = kindIndex(this.kinds).apiVersionKind(apiVersion, stringAt(pk, 'kind'));
    if (!k) throw new Error(`failed to find resource referenced by paramKind: '${apiVersion}, Kind=${stringAt(pk, 'kind')}'`);
    return k;
  }

  /**
   * The params each evaluation sees (Kubernetes' CollectParams): [null] without paramKind or
   * paramRef; none found is an error under parameterNotFoundAction Deny and no evaluation under Allow.
   */
  private params(paramKind: KindStrategy | undefined, bspec: unknown, requestNamespace: string): (KubeObject | null)[] {
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
