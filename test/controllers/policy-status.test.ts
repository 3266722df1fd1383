/** The policy status controller (src/controllers/policy-status.ts) on a real registry: a Store on a MemoryLog. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPolicyStatus } from '../../src/controllers/policy-status.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/registry.js';
import { fixtures } from '../resources/fixtures.js';
import { eventually, openRegistry, type TestRegistry } from '../helpers/registry.js';

let r: TestRegistry;
const stops: (() => void)[] = [];
beforeEach(async () => {
  r = await openRegistry();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) stop();
  await r.close();
});


describe('policy status', () => {
  it('writes status.typeChecking and observedGeneration for a new policy', async () => {
    stops.push(startPolicyStatus(r.objects, kinds, silentLogger));
    const policy = { ...fixtures.validatingAdmissionPolicy(), metadata: { name: 'checked' } };
    delete policy.spec.paramKind;
    policy.spec.variables = [];
    policy.spec.auditAnnotations = [];
    policy.spec.validations = [{ expression: 'object.spek == 1' }];
    policy.spec.matchConstraints = { resourceRules: [{ operations: ['CREATE'], apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'] }] };
    await r.objects.create(r.kind('ValidatingAdmissionPolicy'), undefined, policy, { dryRun: false });
    const status = await eventually(() => r.current('ValidatingAdmissionPolicy', undefined, 'checked')?.status as { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } } | undefined);
    expect(status.observedGeneration).toBe(1);
    expect(status.typeChecking?.expressionWarnings?.[0]).toMatchObject({ fieldRef: 'spec.validations[0].expression', warning: expect.stringContaining("undefined field 'spek'") });
  });
});
