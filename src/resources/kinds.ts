import { clusterRole } from './cluster-role.js';
import { configMap } from './config-map.js';
import { coreEvent } from './core-event.js';
import { lease } from './lease.js';
import { secret } from './secret.js';
import { serviceAccount } from './service-account.js';
import { clusterRoleBinding } from './cluster-role-binding.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { event } from './event.js';
import { mutatingAdmissionPolicy } from './mutating-admission-policy.js';
import { mutatingAdmissionPolicyBinding } from './mutating-admission-policy-binding.js';
import { mutatingWebhookConfiguration } from './mutating-webhook-configuration.js';
import { namespace } from './namespace.js';
import { role } from './role.js';
import { roleBinding } from './role-binding.js';
import { kindIndex, type KindIndex } from '../api/kind-index.js';
import { revisions } from '../api/kind-revisions.js';
import type { CrdCondition, CustomNames, ServedKinds } from '../api/served-kinds.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { apiApprovalCondition } from './crd/api-approval.js';
import { customKindOf, namesOf } from './crd/custom-kind.js';
import { validatingAdmissionPolicy } from './validating-admission-policy.js';
import { validatingAdmissionPolicyBinding } from './validating-admission-policy-binding.js';

/** Every kind orchd serves. Adding a kind is one file in this folder plus its line here. */
export const kinds: KindStrategy[] = [
  namespace,
  event,
  mutatingAdmissionPolicy,
  mutatingAdmissionPolicyBinding,
  mutatingWebhookConfiguration,
  validatingAdmissionPolicy,
  validatingAdmissionPolicyBinding,
  clusterRole,
  clusterRoleBinding,
  role,
  roleBinding,
  customResourceDefinition,
  // After events.orch.io's Event: where a name fits both (`events`, `Event`), the first served is meant.
  configMap,
  secret,
  serviceAccount,
  coreEvent,
  lease,
];

/**
 * The kinds one server serves: the built-in ones, and those its CustomResourceDefinitions define
 * while it runs. `all` is one array for the server's life, changed in place, so every room handed it
 * at start (routing, admission, controllers) sees a kind as soon as it is defined; what is built from
 * the list (indexes, discovery, OpenAPI) is built again when its revision moves (see revisionOf).
 */
export class KindCatalog implements ServedKinds {
  private readonly list: KindStrategy[];
  private readonly listeners = new Set<() => void>();

  constructor(builtIn: readonly KindStrategy[] = kinds) {
    this.list = [...builtIn];
    revisions.set(this.list, 0);
  }

  get all(): readonly KindStrategy[] {
    return this.list;
  }

  get index(): KindIndex {
    return kindIndex(this.list);
  }

  /** The kind served as group/plural, if any. */
  find(group: string, plural: string): KindStrategy | undefined {
    return this.list.find((k) => k.group === group && k.plural === plural);
  }

  /** Serves a kind, in place of the one with its group and plural when there is one. */
  define(kind: KindStrategy): void {
    const at = this.list.findIndex((k) => k.group === kind.group && k.plural === kind.plural);
    if (at >= 0) this.list[at] = kind;
    else this.list.push(kind);
    this.changed();
  }

  defineCustom(crd: KubeObject, refuseCreate?: () => string | undefined): void {
    this.define(customKindOf(crd, refuseCreate ? { refuseCreate } : {}));
  }

  namesOf(crd: KubeObject): CustomNames {
    return namesOf(crd);
  }

  approvalCondition(crd: KubeObject): CrdCondition | undefined {
    return apiApprovalCondition(crd);
  }

  /** Stops serving group/plural; its stored objects are the caller's to delete. */
  remove(group: string, plural: string): void {
    const at = this.list.findIndex((k) => k.group === group && k.plural === plural);
    if (at < 0) return;
    this.list.splice(at, 1);
    this.changed();
  }

  /** Called after every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    revisions.set(this.list, (revisions.get(this.list) ?? 0) + 1);
    for (const l of [...this.listeners]) l();
  }
}

/** The kind served at /apis/<group>/<version>/<plural> (group '' is the core /api/v1). */
export const kindByResource = (group: string, version: string, plural: string): KindStrategy | undefined => kindIndex(kinds).resource(group, version, plural);

/** The kind of an apiVersion/kind pair, e.g. ('events.orch.io', 'v1', 'Event'). */
export const kindByGroupVersionKind = (group: string, version: string, kind: string): KindStrategy | undefined => kindIndex(kinds).kind(group, version, kind);
