import { describe, expect, it } from 'vitest';
import { labelSelectorGoString } from '../../src/resources/admission-cells.js';
import { validateMatchConditions } from '../../src/resources/admission-expressions.js';
import { ruleCoversResource } from '../../src/resources/admission-rules.js';
import { FieldPath } from '../../src/api/field-errors.js';

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

describe('matchConditions may not reference variables (they run before variables are composed)', () => {
  it('refuses a reference to variables with the compile error Kubernetes gives, at the expression', () => {
    const errs = validateMatchConditions(
      [
        { name: 'ok', expression: "object.metadata.name != 'variables'" },
        { name: 'uses-var', expression: "request.operation == 'CREATE' &&\n  variables.isProd" },
      ],
      FieldPath.root('spec.matchConditions'),
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'spec.matchConditions[1].expression', value: "request.operation == 'CREATE' &&\n  variables.isProd" });
    expect(errs[0].detail).toBe("compilation failed: ERROR: <input>:2:3: undeclared reference to 'variables' (in container '')\n |   variables.isProd\n | ..^");
  });
});
