/**
 * ValidatingAdmissionPolicyBinding (admissionregistration.orch.io/v1): puts a ValidatingAdmissionPolicy
 * in force for some requests, with parameters, and says what a failed validation does.
 */
import { paramRefCell } from './admission-cells.js';
import { defaultMatchResources } from './admission-defaults.js';
import { validateBindingSpecCommon } from './admission-policy.js';
import { FieldPath, duplicate, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { listAt, objectAt, stringAt, stringsOf } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { arrayOf, obj, str } from '../api/schema.js';
import { ADMISSION_V1, matchResourcesSchema, paramRefSchema } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

export const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'] as const;

const specSchema = obj(
  `${ADMISSION_V1}.ValidatingAdmissionPolicyBindingSpec`,
  {
    matchResources: { ...matchResourcesSchema, description: 'Narrows the requests of the policy; cannot widen them.' },
    paramRef: paramRefSchema,
    policyName: str('Name of the ValidatingAdmissionPolicy bound. Required.'),
    validationActions: {
      ...arrayOf(str('Deny, Warn or Audit.', { enum: [...VALIDATION_ACTIONS] })),
      description: 'What a failed validation does: Deny rejects, Warn returns a warning, Audit records it. Required, unique, not both Deny and Warn.',
      'x-kubernetes-list-type': 'set',
    },
  },
  { description: 'Desired behaviour of a ValidatingAdmissionPolicyBinding.' },
);

const spec = FieldPath.root('spec');

/** validationActions: required, each Deny/Warn/Audit, no repeats, and never both Deny and Warn. */
function validateValidationActions(actions: string[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!(VALIDATION_ACTIONS as readonly string[]).includes(a)) errs.push(notSupported(p.index(i), a, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(duplicate(p.index(i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(invalid(p, actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  if (seen.size === 0) errs.push(required(p, 'at least one validation action is required'));
  return errs;
}

function validate(o: KubeObject): FieldError[] {
  const s = objectAt(o, 'spec');
  return [...validateBindingSpecCommon(s, spec), ...validateValidationActions(stringsOf(listAt(s, 'validationActions')), spec.child('validationActions'))];
}

export const validatingAdmissionPolicyBinding = {
  group: 'admissionregistration.orch.io',
  versions: ['v1'],
  kind: 'ValidatingAdmissionPolicyBinding',
  listKind: 'ValidatingAdmissionPolicyBindingList',
  plural: 'validatingadmissionpolicybindings',
  singular: 'validatingadmissionpolicybinding',
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: false,
  schema: kindSchema(`${ADMISSION_V1}.ValidatingAdmissionPolicyBinding`, 'Binds a ValidatingAdmissionPolicy to parameters and requests.', { spec: specSchema }),
  applyDefaults(o) {
    defaultMatchResources(objectAt(objectAt(o, 'spec'), 'matchResources'));
  },
  validate,
  tableColumns: [
    { name: 'PolicyName', type: 'string', description: 'The policy this binding binds.', priority: 0, cell: (o) => stringAt(objectAt(o, 'spec'), 'policyName') },
    { name: 'ParamRef', type: 'string', description: 'The parameter resource(s) of the binding.', priority: 0, cell: (o) => paramRefCell(objectAt(o, 'spec')) },
  ],
  allowUnconditionalUpdate: false,
} satisfies KindStrategy;
