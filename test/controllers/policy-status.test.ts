/** The policy status controller (src/controllers/policy-status.ts) on a real registry: a Store on a MemoryLog. */
import { describe, expect, it } from 'vitest';
import { startPolicyStatus } from '../../src/controllers/policy-status.js';
import { silentLogger } from '../../src/observability/logger.js';
import { kinds } from '../../src/resources/kinds.js';
import { fixtures } from '../resources/fixtures.js';
import { eventually } from '../helpers/poll.js';
import { registryPerTest } from '../helpers/registry.js';
import { typeCheckPolicy } from '../../src/admission/index.js';

const t = registryPerTest();
const stops = t.stops;

describe('policy status', () => {
  it('writes status.typeChecking and observedGeneration for a new policy', async () => {
    stops.push(startPolicyStatus(t.r.objects, kinds, typeCheckPolicy, silentLogger));
    const policy = { ...fixtures.validatingAdmissionPolicy(), metadata: { name: 'checked' } };
    delete policy.spec.paramKind;
    policy.spec.variables = [];
    policy.spec.auditAnnotations = [];
    policy.spec.validations = [{ expression: 'object.spek == 1' }];
    policy.spec.matchConstraints = { resourceRules: [{ operations: ['CREATE'], apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'] }] };
    await t.r.objects.create(t.r.kind('ValidatingAdmissionPolicy'), undefined, policy, { dryRun: false });
    const status = await eventually(
      () =>
        t.r.current('ValidatingAdmissionPolicy', undefined, 'checked')?.status as
          { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } } | undefined,
    );
    expect(status.observedGeneration).toBe(1);
    expect(status.typeChecking?.expressionWarnings?.[0]).toMatchObject({ fieldRef: 'spec.validations[0].expression', warning: expect.stringContaining("undefined field 'spek'") });
  });
});
