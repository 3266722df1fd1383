/**
 * kubectl's patching commands against a real orchd: client-side apply (create, then a three-way
 * strategic patch with its last-applied annotation), server-side apply with two field managers and
 * --force-conflicts, label, annotate, patch of each type, and edit through an EDITOR script.
 * One server, one kubectl (the one on PATH), its own kubeconfig, cache and HOME.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubectlForFile } from '../helpers/kubectl.js';
import { call } from '../helpers/server.js';

const VAP = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';

const policyYaml = (name: string, opts: { failurePolicy?: string; conditions?: string[]; labels?: Record<string, string> } = {}): string => `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
${
  opts.labels
    ? `  labels:\n${Object.entries(opts.labels)
        .map(([k, v]) => `    ${k}: ${v}`)
        .join('\n')}\n`
    : ''
}spec:
${opts.failurePolicy ? `  failurePolicy: ${opts.failurePolicy}\n` : ''}  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  matchConditions:
${(opts.conditions ?? ['a']).map((c) => `  - name: ${c}\n    expression: "true"`).join('\n')}
  validations:
  - expression: "object.spec.replicas < 5"
`;

const session = kubectlForFile();
const { kubectl, file } = session;
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(args);
  expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}
const get = async (name: string) => (await call(session.server.url, 'GET', `${VAP}/${name}`)).body;
const managers = (o: any): string[] => (o.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}`).sort();

describe('kubectl patching commands', () => {
  it('apply -f (client-side): create, modify, re-apply', { timeout: 60_000 }, async () => {
    const path = await file('csa.yaml', policyYaml('csa.example.com', { failurePolicy: 'Fail', conditions: ['a', 'b'], labels: { team: 'x' } }));
    expect(await ok('apply', '-f', path)).toContain('validatingadmissionpolicy.admissionregistration.orch.io/csa.example.com created');
    const created = await get('csa.example.com');
    expect(created.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"failurePolicy":"Fail"');
    expect(managers(created)).toEqual(['kubectl-client-side-apply/Update']);

    // Changed value, one condition dropped, one added, a label removed: a three-way strategic patch.
    await file('csa.yaml', policyYaml('csa.example.com', { failurePolicy: 'Ignore', conditions: ['b', 'c'] }));
    expect(await ok('apply', '-f', path)).toContain('configured');
    const after = await get('csa.example.com');
    expect(after.spec.failurePolicy).toBe('Ignore');
    expect(after.spec.matchConditions.map((c: any) => c.name)).toEqual(['b', 'c']);
    expect(after.metadata.labels).toBeUndefined();
    expect(after.metadata.generation).toBe(2);
    expect(JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.failurePolicy).toBe('Ignore');

    // Re-applying the same file writes nothing. (kubectl may still print "configured": its three-way
    // diff resends atomic lists the server defaulted into, such as resourceRules' scope.)
    await ok('apply', '-f', path);
    expect((await get('csa.example.com')).metadata.resourceVersion).toBe(after.metadata.resourceVersion);
  });

  it('apply --server-side: create, a second manager conflicts, --force-conflicts takes over', { timeout: 60_000 }, async () => {
    const path = await file('ssa.yaml', policyYaml('ssa.example.com', { failurePolicy: 'Fail' }));
    expect(await ok('apply', '--server-side', '-f', path)).toContain('serverside-applied');
    expect(managers(await get('ssa.example.com'))).toEqual(['kubectl/Apply']);

    const other = await file(
      'ssa-other.yaml',
      `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ssa.example.com
spec:
  failurePolicy: Ignore
`,
    );
    const conflict = await kubectl(['apply', '--server-side', '--field-manager=ops', '-f', other]);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict with "kubectl"');
    expect(conflict.stderr).toContain('.spec.failurePolicy');

    expect(await ok('apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', other)).toContain('serverside-applied');
    const after = await get('ssa.example.com');
    expect(after.spec.failurePolicy).toBe('Ignore');
    expect(managers(after)).toEqual(['kubectl/Apply', 'ops/Apply']);

    // The first manager drops a condition it alone applied: it is removed.
    await file('ssa.yaml', policyYaml('ssa.example.com', { conditions: [] }).replace('  matchConditions:\n\n', ''));
    await ok('apply', '--server-side', '-f', path);
    const pruned = await get('ssa.example.com');
    expect(pruned.spec.matchConditions).toBeUndefined();
    expect(pruned.spec.failurePolicy).toBe('Ignore');
  });

  it('label, annotate and patch --type json|merge|strategic', { timeout: 60_000 }, async () => {
    await ok('apply', '-f', await file('lp.yaml', policyYaml('lp.example.com', { conditions: ['a', 'b'] })));
    expect(await ok('label', 'validatingadmissionpolicy', 'lp.example.com', 'tier=gold')).toContain('labeled');
    expect(await ok('annotate', 'validatingadmissionpolicy', 'lp.example.com', 'example.com/owner=me')).toContain('annotated');
    await ok('patch', 'validatingadmissionpolicy', 'lp.example.com', '--type=json', '-p', '[{"op":"replace","path":"/spec/failurePolicy","value":"Ignore"}]');
    await ok('patch', 'validatingadmissionpolicy', 'lp.example.com', '--type=merge', '-p', '{"metadata":{"labels":{"tier":null,"env":"prod"}}}');
    await ok('patch', 'validatingadmissionpolicy', 'lp.example.com', '--type=strategic', '-p', '{"spec":{"matchConditions":[{"name":"c","expression":"false"},{"name":"a","$patch":"delete"}]}}');
    const o = await get('lp.example.com');
    expect(o.metadata.labels).toEqual({ env: 'prod' });
    expect(o.metadata.annotations['example.com/owner']).toBe('me');
    expect(o.spec.failurePolicy).toBe('Ignore');
    expect(o.spec.matchConditions.map((c: any) => c.name).sort()).toEqual(['b', 'c']);
    expect(managers(o)).toEqual(['kubectl-annotate/Update', 'kubectl-client-side-apply/Update', 'kubectl-label/Update', 'kubectl-patch/Update']);

    const failing = await kubectl(['patch', 'validatingadmissionpolicy', 'lp.example.com', '--type=json', '-p', '[{"op":"test","path":"/spec/failurePolicy","value":"Fail"}]']);
    expect(failing.code).not.toBe(0);
    expect(failing.stderr).toContain('the server rejected our request');
  });

  it('edit through an EDITOR script sends a merge patch of the edited fields', { timeout: 60_000 }, async () => {
    await ok('apply', '--server-side', '-f', await file('ed.yaml', policyYaml('ed.example.com', { failurePolicy: 'Fail' })));
    const editor = join(session.home, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\nsed -i "s/failurePolicy: Fail/failurePolicy: Ignore/" "$1"\n');
    await chmod(editor, 0o755);
    const r = await kubectl(['edit', 'validatingadmissionpolicy', 'ed.example.com'], undefined, { EDITOR: editor, KUBE_EDITOR: editor });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('edited');
    const o = await get('ed.example.com');
    expect(o.spec.failurePolicy).toBe('Ignore');
    expect(managers(o), JSON.stringify(o.metadata.managedFields)).toEqual(['kubectl-edit/Update', 'kubectl/Apply']);
  });
});
