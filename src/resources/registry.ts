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

const byResource = new Map<string, KindStrategy>();
const byKind = new Map<string, KindStrategy>();
for (const k of kinds) {
  for (const v of k.versions) {
    byResource.set(`${k.group}/${v}/${k.plural}`, k);
    byKind.set(`${k.group}/${v}/${k.kind}`, k);
  }
}

/** The kind served at /apis/<group>/<version>/<plural> (group '' is the core /api/v1). */
export const kindByResource = (group: string, version: string, plural: string): KindStrategy | undefined => byResource.get(`${group}/${version}/${plural}`);

/** The kind of an apiVersion/kind pair, e.g. ('events.orch.io', 'v1', 'Event'). */
export const kindByGroupVersionKind = (group: string, version: string, kind: string): KindStrategy | undefined => byKind.get(`${group}/${version}/${kind}`);
