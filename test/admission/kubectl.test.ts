/**
 * kubectl against a real orchd with a validating policy: a refused create prints the denial, a
 * Warn binding prints kubectl's "Warning:" line and the object is created; `kubectl get -o yaml`
 * shows the type-checking status of a policy with a misspelt field.
 */
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { kubectlForFile } from '../helpers/kubectl.js';
import { call } from '../helpers/server.js';
import { sleep } from '../helpers/poll.js';

const session = kubectlForFile({ policyStatus: true });
const kubectl = session.kubectl;

const policyYaml = `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: team-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["namespaces"]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: namespaces must carry label team
---
apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: team-label-binding
spec:
  policyName: team-label
  validationActions: [Deny]
`;

describe('kubectl and validating policies', () => {
  test('kubectl create -f of a refused object prints the denial; a Warn binding prints a warning', async () => {
    const policy = await session.file('policy.yaml', policyYaml);
    const p = await kubectl(['create', '-f', policy]);
    expect(p.code, p.stderr).toBe(0);
    const ns = await session.file('ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: unlabelled\n');
    const r = await kubectl(['create', '-f', ns]);
    expect(r.code).not.toBe(0);
    // kubectl rewrites a 422 Invalid from its causes (a cause without a field), as it does for Kubernetes.
    expect(r.stderr).toContain(`The namespaces "unlabelled" is invalid: : ValidatingAdmissionPolicy 'team-label' with binding 'team-label-binding' denied request: namespaces must carry label team`);
    expect((await call(session.server.url, 'GET', '/api/v1/namespaces/unlabelled')).status).toBe(404);

    const b = await kubectl(['patch', 'validatingadmissionpolicybinding', 'team-label-binding', '--type=merge', '-p', '{"spec":{"validationActions":["Warn"]}}']);
    expect(b.code, b.stderr).toBe(0);
    const w = await kubectl(['create', '-f', ns]);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toContain("Warning: Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-binding': namespaces must carry label team");
    expect(w.stdout).toContain('namespace/unlabelled created');
  });
  test('kubectl get -o yaml shows a misspelt field in status.typeChecking, with no request refused', async () => {
    const file = await session.file(
      'typo.yaml',
      `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas-typo
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["namespaces"]
  validations:
  - expression: "object.spec.replicsa > 1"
`,
    );
    const c = await kubectl(['create', '-f', file]);
    expect(c.code, c.stderr).toBe(0);
    let status: any;
    for (let i = 0; i < 100 && !status?.typeChecking; i++) {
      const g = await kubectl(['get', 'validatingadmissionpolicy', 'replicas-typo', '-o', 'yaml']);
      expect(g.code, g.stderr).toBe(0);
      status = parseYaml(g.stdout).status;
      if (!status?.typeChecking) await sleep(50);
    }
    expect(status.observedGeneration).toBe(1);
    expect(status.typeChecking.expressionWarnings).toEqual([
      { fieldRef: 'spec.validations[0].expression', warning: expect.stringMatching(/^\/v1, Kind=Namespace: ERROR: <input>:1:\d+: undefined field 'replicsa'\n/) },
    ]);
  });
});
