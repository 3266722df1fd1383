/** Admission on the write path: the hooks the object store calls, and the per-request context they read. */
import type { Authorizer } from '../cel/index.js';
import type { KindStrategy } from '../api/strategy.js';
import type { StoreReads } from '../store/store.js';
import { admissionAttributes, type AdmissionOptions } from './attributes.js';
import type { Operation } from './matching.js';
import type { KubeObject } from '../api/types.js';
import { MutatingPolicyPlugin } from './mutating-policy-plugin.js';
import { beginPlugins, runPasses, type MutatingPlugin } from './mutation.js';
import { MutatingWebhooks, type WebhookAdmissionOptions } from './mutating-webhooks.js';
import { currentAdmissionContext } from './request-context.js';
import { ValidatingAdmission } from './validating-admission.js';
import { activeSpanRecorded, inSpan } from '../observability/spans.js';

export { runWithAdmissionContext, runAsSystem, runAsWrite, currentAdmissionContext, currentWriter } from './request-context.js';
export { typeCheckPolicy } from './type-checking.js';
export { ValidatingAdmission } from './validating-admission.js';
export { MutatingPolicyPlugin } from './mutating-policy-plugin.js';
export type { WebhookAdmissionOptions } from './mutating-webhooks.js';

/**
 * Admission on the object store's write path, in Kubernetes' order: mutate runs after defaulting
 * and before validation (the store defaults its result again, as a decoded webhook patch is),
 * validate after validation, just before the write. Both throw an AdmissionError to refuse the request.
 * With nothing to run for the write they answer at once, not with a promise: the caller awaits only
 * a phase that runs something (an await of a settled promise is still a turn of microtasks and, with
 * the request's AsyncLocalStorage on, a promise hook per promise: two per write for nothing).
 */
export interface AdmissionHooks {
  mutate(op: Exclude<Operation, 'CONNECT'>, kind: KindStrategy, obj: KubeObject, old: KubeObject | undefined, opts: AdmissionOptions): KubeObject | Promise<KubeObject>;
  validate(op: Exclude<Operation, 'CONNECT'>, kind: KindStrategy, obj: KubeObject, old: KubeObject | undefined, opts: AdmissionOptions): void | Promise<void>;
}

/**
 * The admission hooks for a server serving these kinds; undefined when no admission kinds are
 * served. opts: how webhooks are dialed (egress) and what they are shown (credentials); the
 * authorizer answers the `authorizer` variable of policy expressions.
 */
export function admissionFor(store: StoreReads, kinds: readonly KindStrategy[], opts: WebhookAdmissionOptions & { authorizer?: Authorizer } = {}): AdmissionHooks | undefined {
  const find = (k: string) => kinds.find((x) => x.kind === k && x.group === 'admissionregistration.orch.io');
  const served = (k: string) => find(k) !== undefined;
  const validating = served('ValidatingAdmissionPolicy') && served('ValidatingAdmissionPolicyBinding') ? new ValidatingAdmission(store, kinds, opts.authorizer) : undefined;
  // Policies run before webhooks, as in Kubernetes' plugin order.
  const mutating: MutatingPlugin[] = [];
  if (served('MutatingAdmissionPolicy') && served('MutatingAdmissionPolicyBinding')) mutating.push(new MutatingPolicyPlugin(store, kinds, opts.authorizer));
  const webhookKind = find('MutatingWebhookConfiguration');
  if (webhookKind) mutating.push(new MutatingWebhooks(store, webhookKind, opts));
  if (!validating && mutating.length === 0) return undefined;
  const namespaceKind = kinds.find((k) => k.group === '' && k.kind === 'Namespace');
  const attributes = (...[op, kind, obj, old, opts]: Parameters<AdmissionHooks['mutate']>) => admissionAttributes(store, namespaceKind, op, kind, obj, old, currentAdmissionContext().user, opts);
  // One span per phase, a child of the request's (see src/http/request-span.ts). A phase with
  // nothing to run in a request whose span is not recorded (no tracing, or not sampled) skips the
  // span and its async wrapper: most writes, and a span nobody sees.
  const phase = <T>(name: 'mutate' | 'validate', op: string, kind: KindStrategy, obj: KubeObject, run: () => Promise<T>) =>
    inSpan(`admission.${name}`, { 'admission.operation': op, 'k8s.resource': kind.plural, 'k8s.object.name': obj.metadata.name ?? obj.metadata.generateName ?? '' }, run);
  return {
    mutate: (op, kind, obj, old, opts) => {
      const passes = beginPlugins(mutating, op, kind);
      if (passes.length === 0 && !activeSpanRecorded()) return obj;
      return phase('mutate', op, kind, obj, () => runPasses(passes, () => attributes(op, kind, obj, old, opts), obj));
    },
    validate: (op, kind, obj, old, opts) => {
      const applies = validating?.applies(kind) ?? false;
      if (!applies && !activeSpanRecorded()) return;
      return phase('validate', op, kind, obj, async () => (applies ? validating!.validate(attributes(op, kind, obj, old, opts)) : undefined));
    },
  };
}
