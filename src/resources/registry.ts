import { clusterRole } from './cluster-role.js';
import { clusterRoleBinding } from './cluster-role-binding.js';
import { event } from './event.js';
import { mutatingAdmissionPolicy } from './mutating-admission-policy.js';
import { mutatingAdmissionPolicyBinding } from './mutating-admission-policy-binding.js';
import { mutatingWebhookConfiguration } from './mutating-webhook-configuration.js';
import { namespace } from './namespace.js';
import { role } from './role.js';
import { roleBinding } from './role-binding.js';
import type { KindStrategy } from './strategy.js';
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
];

/**
 * Lookups over one list of served kinds, by resource path and by apiVersion/kind. Every room asks
 * the list it was given (the server's, from `kinds` above; a test's own), through its index.
 */
export class KindIndex {
  private readonly byResource = new Map<string, KindStrategy>();
  private readonly byKind = new Map<string, KindStrategy>();

  constructor(readonly all: readonly KindStrategy[]) {
    for (const k of all) {
      for (const v of k.versions) {
        this.byResource.set(`${k.group}/${v}/${k.plural}`, k);
        this.byKind.set(`${k.group}/${v}/${k.kind}`, k);
      }
    }
  }

  /** The kind served at /apis/<group>/<version>/<plural> (group '' is the core /api/v1). */
  resource(group: string, version: string, plural: string): KindStrategy | undefined {
    return this.byResource.get(`${group}/${version}/${plural}`);
  }

  /** The kind of a group, version and kind, e.g. ('events.orch.io', 'v1', 'Event'). */
  kind(group: string, version: string, kind: string): KindStrategy | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** The kind of an apiVersion ("group/version", or "v1" for the core group) and kind name. */
  apiVersionKind(apiVersion: string, kind: string): KindStrategy | undefined {
    const slash = apiVersion.indexOf('/');
    return this.kind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }
}

const indexes = new WeakMap<readonly KindStrategy[], KindIndex>();

/** The index of a list of kinds (built once per list); by default, of every kind orchd serves. */
export function kindIndex(list: readonly KindStrategy[] = kinds): KindIndex {
  let index = indexes.get(list);
  if (!index) indexes.set(list, (index = new KindIndex(list)));
  return index;
}

/** The kind served at /apis/<group>/<version>/<plural> (group '' is the core /api/v1). */
export const kindByResource = (group: string, version: string, plural: string): KindStrategy | undefined => kindIndex().resource(group, version, plural);

/** The kind of an apiVersion/kind pair, e.g. ('events.orch.io', 'v1', 'Event'). */
export const kindByGroupVersionKind = (group: string, version: string, kind: string): KindStrategy | undefined => kindIndex().kind(group, version, kind);
