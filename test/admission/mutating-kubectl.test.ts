/**
 * kubectl against a real orchd with a mutating policy: `kubectl create -f` of a policy and binding
 * that add a label, then of an Event, and `kubectl get -o yaml` shows the label stored.
 */
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { kubectlForFile } from '../helpers/kubectl.js';

const session = kubectlForFile();

const policyYaml = `apiVersion: admissionregistration.orch.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: add-owner
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["events.orch.io"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["events"]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"owner": "team-" + object.reportingController.split("/")[1]}}}
---
apiVersion: admissionregistration.orch.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: add-owner-binding
spec:
  policyName: add-owner
`;

const eventYaml = `apiVersion: events.orch.io/v1
kind: Event
metadata:
  name: scheduled
  namespace: default
  labels:
    app: web
eventTime: "2026-01-02T03:04:05.123456Z"
reportingController: orch.io/scheduler
reportingInstance: scheduler-1
action: Binding
reason: Scheduled
type: Normal
note: assigned
regarding:
  kind: Pod
  namespace: default
  name: web-1
  apiVersion: v1
`;

describe('kubectl and mutating policies', () => {
  test('a policy created with kubectl labels the Event kubectl creates; kubectl get -o yaml shows it', async () => {
    const p = await session.kubectl(['create', '-f', await session.file('policy.yaml', policyYaml)]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain('mutatingadmissionpolicy.admissionregistration.orch.io/add-owner created');
    expect(p.stdout).toContain('mutatingadmissionpolicybinding.admissionregistration.orch.io/add-owner-binding created');

    const e = await session.kubectl(['create', '-f', await session.file('event.yaml', eventYaml)]);
    expect(e.code, e.stderr).toBe(0);
    const got = await session.kubectl(['get', 'events.v1.events.orch.io', 'scheduled', '-n', 'default', '-o', 'yaml']);
    expect(got.code, got.stderr).toBe(0);
    expect(parse(got.stdout).metadata.labels).toEqual({ app: 'web', owner: 'team-scheduler' });

    // Deleting the binding stops the mutation.
    expect((await session.kubectl(['delete', 'mutatingadmissionpolicybinding', 'add-owner-binding'])).code).toBe(0);
    const e2 = await session.kubectl(['create', '-f', await session.file('event2.yaml', eventYaml.replace('name: scheduled', 'name: unlabelled'))]);
    expect(e2.code, e2.stderr).toBe(0);
    const got2 = await session.kubectl(['get', 'events.v1.events.orch.io', 'unlabelled', '-n', 'default', '-o', 'jsonpath={.metadata.labels}']);
    expect(JSON.parse(got2.stdout)).toEqual({ app: 'web' });
  });
});
