import { describe, expect, it } from 'vitest';
import { labelSelectorGoString } from '../../src/resources/admission-cells.js';
import { ruleCoversResource } from '../../src/resources/admission-rules.js';

describe('rules that cover the policy kinds (exempted at admission, not rejected)', () => {
  const G = 'admissionregistration.orch.io';
  it.each([
    ['explicit group and resource', { apiGroups: [G], resources: ['mutatingadmissionpolicies'] }, true],
    ['a subresource of it', { apiGroups: [G], resources: ['mutatingadmissionpolicies/status'] }, true],
    ["'*' groups and resources", { apiGroups: ['*'], resources: ['*'] }, true],
    ["'*/*'", { apiGroups: ['*'], resources: ['*/*'] }, true],
    ['another group', { apiGroups: ['apps'], resources: ['*'] }, false],
    ['another resource', { apiGroups: [G], resources: ['validatingadmissionpolicies'] }, false],
  ])('%s', (_n, rule, want) => expect(ruleCoversResource(rule, G, 'mutatingadmissionpolicies')).toBe(want));
});

describe('selector text in PARAMREF', () => {
  it('matches the Go struct text of a LabelSelector', () => {
    expect(labelSelectorGoString({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] })).toBe(
      '&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,Values:[a b],},},}',
    );
  });
});
