import { describe, expect, it } from 'vitest';
import { kindByGroupVersionKind, kindByResource, kinds } from '../../src/resources/kinds.js';
import type { Schema } from '../../src/api/schema.js';
import { findTypeErrors, findUnknownFields } from '../../src/api/unknown-fields.js';
import { validateObjectMeta } from '../../src/resources/metadata.js';
import { fixtures, pairs } from './fixtures.js';

const fixtureOf: Record<string, () => any> = {
  Namespace: fixtures.namespace,
  Event: fixtures.event,
  MutatingAdmissionPolicy: fixtures.mutatingAdmissionPolicy,
  MutatingAdmissionPolicyBinding: fixtures.mutatingAdmissionPolicyBinding,
  MutatingWebhookConfiguration: fixtures.mutatingWebhookConfiguration,
  ValidatingAdmissionPolicy: fixtures.validatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding: fixtures.validatingAdmissionPolicyBinding,
  Role: fixtures.role,
  ClusterRole: fixtures.clusterRole,
  RoleBinding: fixtures.roleBinding,
  ClusterRoleBinding: fixtures.clusterRoleBinding,
  CustomResourceDefinition: fixtures.customResourceDefinition,
  ConfigMap: () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { 'app.conf': 'x=1' }, binaryData: { blob: 'AAE=' }, immutable: false }),
  Secret: () => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'Q0VSVA==' }, stringData: { 'tls.key': 'KEY' } }),
  ServiceAccount: () => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'bot', namespace: 'default' },
    secrets: [{ name: 'creds' }],
    imagePullSecrets: [{ name: 'pull' }],
    automountServiceAccountToken: false,
  }),
  'v1/Event': () => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.1', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Started',
    message: 'started',
    type: 'Normal',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:00:00Z',
    count: 1,
  }),
  Lease: () => ({
    apiVersion: 'coordination.orch.io/v1',
    kind: 'Lease',
    metadata: { name: 'leader', namespace: 'default' },
    spec: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0, renewTime: '2026-01-01T00:00:00.000000Z' },
  }),
};
/** The fixture of a kind: by kind name, the core Event by its apiVersion too (two kinds are named Event). */
const fixtureKey = (k: { group: string; kind: string }) => (k.group === '' && k.kind === 'Event' ? 'v1/Event' : k.kind);

describe('registry', () => {
  it('holds every kind once', () => {
    expect(kinds.map(fixtureKey).sort()).toEqual(Object.keys(fixtureOf).sort());
  });

  it.each([
    ['admissionregistration.orch.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy'],
    ['admissionregistration.orch.io', 'v1alpha1', 'mutatingadmissionpolicies', 'MutatingAdmissionPolicy'],
    ['admissionregistration.orch.io', 'v1beta1', 'mutatingadmissionpolicybindings', 'MutatingAdmissionPolicyBinding'],
    ['admissionregistration.orch.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'],
    ['events.orch.io', 'v1', 'events', 'Event'],
    ['', 'v1', 'namespaces', 'Namespace'],
    ['rbac.authorization.orch.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding'],
  ])('finds %s/%s %s', (group, version, plural, kind) => {
    expect(kindByResource(group, version, plural)?.kind).toBe(kind);
    expect(kindByGroupVersionKind(group, version, kind)?.plural).toBe(plural);
  });

  it.each([
    ['a version not served', 'admissionregistration.orch.io', 'v1beta1', 'validatingadmissionpolicies'],
    ['the k8s.io group', 'admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies'],
    ['an unknown resource', 'events.orch.io', 'v1', 'widgets'],
  ])('does not find %s', (_n, group, version, plural) => expect(kindByResource(group, version, plural)).toBeUndefined());
});

describe.each(kinds.map((k) => [k.kind, k] as const))('%s', (_name, kind) => {
  it('its valid fixture defaults and validates cleanly, metadata included', () => {
    const o = fixtureOf[fixtureKey(kind)]();
    kind.prepareForCreate?.(o);
    kind.applyDefaults(o);
    expect(pairs(kind.validate(o))).toEqual([]);
    expect(pairs(validateObjectMeta(o.metadata, kind.namespaced, kind.nameFormat))).toEqual([]);
  });

  it('its schema declares every field of the defaulted fixture, with the right types', () => {
    const o = fixtureOf[fixtureKey(kind)]();
    kind.prepareForCreate?.(o);
    kind.applyDefaults(o);
    expect(findUnknownFields(o, kind.schema)).toEqual([]);
    expect(findTypeErrors(o, kind.schema)).toEqual([]);
  });

  it('is published under an io.orch name with apiVersion, kind and metadata', () => {
    expect(kind.schema.refName).toMatch(/^io\.orch\.api\./);
    expect(Object.keys(kind.schema.properties!)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata']));
  });

  it('has table columns with a cell for the fixture', () => {
    for (const c of kind.tableColumns) expect(['string', 'number', 'boolean']).toContain(typeof c.cell(fixtureOf[fixtureKey(kind)]()));
  });
});

/** Every schema reachable from the kinds, by definition name. */
function definitions(): Map<string, Schema[]> {
  const seen = new Map<string, Schema[]>();
  const visit = (s: Schema) => {
    if (s.refName) {
      const list = seen.get(s.refName) ?? [];
      if (list.includes(s)) return;
      list.push(s);
      seen.set(s.refName, list);
    }
    for (const p of Object.values(s.properties ?? {})) visit(p);
    if (s.items) visit(s.items);
    if (s.additionalProperties) visit(s.additionalProperties);
  };
  for (const k of kinds) visit(k.schema);
  return seen;
}

describe('shared definitions', () => {
  it('one definition name means one shape (only descriptions may differ where a field is described in place)', () => {
    // A nested named type is compared by its name (JSONSchemaProps contains itself).
    const strip = (s: Schema): unknown =>
      JSON.parse(
        JSON.stringify(s, function (this: unknown, k, v) {
          if (k === 'description') return undefined;
          return k !== '' && v && typeof v === 'object' && typeof v.refName === 'string' ? { $ref: v.refName } : v;
        }),
      );
    for (const [name, list] of definitions()) {
      for (const s of list) expect(strip(s), name).toEqual(strip(list[0]));
    }
  });

  it('the admission kinds share MatchResources, ParamRef, MatchCondition', () => {
    const names = [...definitions().keys()];
    for (const n of ['MatchResources', 'NamedRuleWithOperations', 'ParamKind', 'ParamRef', 'MatchCondition', 'Variable']) {
      expect(names).toContain(`io.orch.api.admissionregistration.v1.${n}`);
    }
    expect(names).toContain('io.orch.apimachinery.pkg.apis.meta.v1.LabelSelector');
    expect(names).toContain('io.orch.api.core.v1.ObjectReference');
  });
});
