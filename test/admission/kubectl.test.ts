/**
 * kubectl against a real orchd with a validating policy: a refused create prints the denial, a
 * Warn binding prints kubectl's "Warning:" line and the object is created.
 */
import { describe, expect, test } from 'vitest';
import { KUBECTL, kubectlForFile } from '../helpers/kubectl.js';
import { call } from '../helpers/server.js';

if (!KUBECTL) console.warn('no kubectl on PATH: skipping the kubectl admission tests');

const session = kubectlForFile();
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

describe.skipIf(!KUBECTL)('kubectl and validating policies', () => {
  test('kubectl create -f of a refused object prints the denial; a Warn binding prints a warning', async () => {
    const policy = await session.file('policy.yaml', policyYaml);
    const p = await kubectl(['create', '-f', policy]);
    expect(p.code, p.stderr).toBe(0);
    const ns = await session.file('ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: unlabelled\n');
    const r = await kubectl(['create', '-f', ns]);
    expect(r.code).not.toBe(0);
    // kubectl rewrites a 422 Invalid from its causes (a cause without a field), as it does for Kubernetes.
    expect(r.stderr).toContain(
      `The namespaces "unlabelled" is invalid: : ValidatingAdmissionPolicy 'team-label' with binding 'team-label-binding' denied request: namespaces must carry label team`,
    );
    expect((await call(session.server.url, 'GET', '/api/v1/namespaces/unlabelled')).status).toBe(404);

    const b = await kubectl(['patch', 'validatingadmissionpolicybinding', 'team-label-binding', '--type=merge', '-p', '{"spec":{"validationActions":["Warn"]}}']);
    expect(b.code, b.stderr).toBe(0);
    const w = await kubectl(['create', '-f', ns]);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toContain("Warning: Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-binding': namespaces must carry label team");
    expect(w.stdout).toContain('namespace/unlabelled created');
  });
});
