/**
 * One valid object per kind, and a table runner: each row mutates a fresh copy, the kind defaults
 * and validates it, and the row names the [type, field] pairs it expects (not message text).
 */
import { expect } from 'vitest';
import type { FieldError, FieldErrorType } from '../../src/api/field-errors.js';
import type { KindStrategy } from '../../src/api/strategy.js';
import type { KubeObject } from '../../src/api/types.js';

export type Expected = [FieldErrorType, string][];
export type Row = [name: string, mutate: (o: any) => void, expected: Expected];

export const pairs = (errs: FieldError[]): Expected => errs.map((e) => [e.type, e.field]);

const RULE = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

export const fixtures = {
  customResourceDefinition: (): any => ({
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0, default: 1 } }, 'x-kubernetes-validations': [{ rule: 'self.size < 100' }] },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  }),
  validatingAdmissionPolicy: (): any => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'replicas.example.com' },
    spec: {
      paramKind: { apiVersion: 'example.com/v1', kind: 'ReplicaLimit' },
      matchConstraints: { resourceRules: [structuredClone(RULE)] },
      matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'limit', expression: 'variables.replicas <= params.max' },
      ],
      validations: [{ expression: 'variables.limit', message: 'too many replicas', reason: 'Forbidden' }],
      auditAnnotations: [{ key: 'high-replicas', valueExpression: "'replicas: ' + string(object.spec.replicas)" }],
    },
  }),
  validatingAdmissionPolicyBinding: (): any => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'replicas-binding' },
    spec: {
      policyName: 'replicas.example.com',
      paramRef: { name: 'limit', namespace: 'default', parameterNotFoundAction: 'Deny' },
      matchResources: { namespaceSelector: { matchLabels: { env: 'test' } } },
      validationActions: ['Deny', 'Audit'],
    },
  }),
  mutatingAdmissionPolicy: (): any => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: 'sidecar.example.com' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
      variables: [{ name: 'labels', expression: 'object.metadata.labels' }],
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"x": "y"}}}' } }],
      reinvocationPolicy: 'Never',
    },
  }),
  mutatingAdmissionPolicyBinding: (): any => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: 'sidecar-binding' },
    spec: { policyName: 'sidecar.example.com', paramRef: { selector: { matchLabels: { tier: 'gold' } }, parameterNotFoundAction: 'Allow' } },
  }),
  mutatingWebhookConfiguration: (): any => ({
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'inject' },
    webhooks: [
      {
        name: 'inject.sidecar.example.com',
        clientConfig: { service: { name: 'injector', namespace: 'system', path: '/mutate' }, caBundle: 'Q0E=' },
        rules: [structuredClone(RULE)],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        matchConditions: [{ name: 'only-labelled', expression: 'has(object.metadata.labels)' }],
      },
      {
        name: 'audit.sidecar.example.com',
        clientConfig: { url: 'https://audit.example.com/hook' },
        sideEffects: 'NoneOnDryRun',
        admissionReviewVersions: ['v1beta1', 'v1'],
        timeoutSeconds: 30,
      },
    ],
  }),
  event: (): any => ({
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name: 'web-1.17a', namespace: 'default' },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'orch.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u-1', apiVersion: 'v1' },
    note: 'Successfully assigned default/web-1 to node-1',
    type: 'Normal',
  }),
  namespace: (): any => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }),
  role: (): any => ({
    apiVersion: 'rbac.authorization.orch.io/v1',
    kind: 'Role',
    metadata: { name: 'event-reader', namespace: 'dev' },
    rules: [
      { apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], resourceNames: ['dev'], verbs: ['get'] },
    ],
  }),
  clusterRole: (): any => ({
    apiVersion: 'rbac.authorization.orch.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:health-reader' },
    rules: [
      { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
      { nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] },
    ],
  }),
  roleBinding: (): any => ({
    apiVersion: 'rbac.authorization.orch.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'read-events', namespace: 'dev' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'event-reader' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'auditors' },
      { kind: 'ServiceAccount', name: 'builder' },
    ],
  }),
  clusterRoleBinding: (): any => ({
    apiVersion: 'rbac.authorization.orch.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'health-readers' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'system:health-reader' },
    subjects: [
      { kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.orch.io' },
      { kind: 'ServiceAccount', name: 'monitor', namespace: 'ops' },
    ],
  }),
};

/** Defaults then validates a copy of base changed by each row, against the row's expected errors. */
export function rowRunner(kind: KindStrategy, base: () => KubeObject, check: (k: KindStrategy, o: KubeObject) => FieldError[] = (k, o) => k.validate(o)) {
  return (name: string, mutate: (o: any) => void, expected: Expected) => {
    const o = base();
    mutate(o);
    kind.applyDefaults(o);
    expect(pairs(check(kind, o)), name).toEqual(expected);
  };
}

export const repeat = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
