/**
 * MutatingAdmissionPolicyBinding (admissionregistration.orch.io v1, v1beta1, v1alpha1): puts a
 * MutatingAdmissionPolicy in force for some requests, with parameters.
 */
import { paramRefCell } from './admission-cells.js';
import { defaultMatchResources, defaultParamRef } from './admission-defaults.js';
import { validateBindingSpecCommon } from './admission-policy.js';
import { validateMutatingOperations } from './admission-rules.js';
import { FieldPath, type FieldError } from '../api/field-errors.js';
import { objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { obj, str } from '../api/schema.js';
import { ADMISSION_V1, matchResourcesSchema, paramRefSchema } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

const specSchema = obj(
  `${ADMISSION_V1}.MutatingAdmissionPolicyBindingSpec`,
  {
    matchResources: {
      ...matchResourcesSchema,
      description: 'Narrows the requests of the policy; cannot widen them. CREATE, UPDATE and CONNECT only, as for the policy.',
    },
    paramRef: paramRefSchema,
    policyName: str('Name of the MutatingAdmissionPolicy bound. Required.'),
  },
  { description: 'Desired behaviour of a MutatingAdmissionPolicyBinding.' },
);

const spec = FieldPath.root('spec');

function validate(o: KubeObject): FieldError[] {
  const s = objectAt(o, 'spec');
  return [...validateBindingSpecCommon(s, spec), ...validateMutatingOperations(objectAt(s, 'matchResources'), spec.child('matchResources'))];
}

export const mutatingAdmissionPolicyBinding = {
  group: 'admissionregistration.orch.io',
  versions: ['v1', 'v1beta1', 'v1alpha1'],
  kind: 'MutatingAdmissionPolicyBinding',
  listKind: 'MutatingAdmissionPolicyBindingList',
  plural: 'mutatingadmissionpolicybindings',
  singular: 'mutatingadmissionpolicybinding',
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: false,
  schema: kindSchema(`${ADMISSION_V1}.MutatingAdmissionPolicyBinding`, 'Binds a MutatingAdmissionPolicy to parameters and requests.', { spec: specSchema }),
  applyDefaults(o) {
    const s = objectAt(o, 'spec');
    defaultMatchResources(objectAt(s, 'matchResources'));
    defaultParamRef(s, o.apiVersion ?? '');
  },
  validate,
  tableColumns: [
    { name: 'PolicyName', type: 'string', description: 'The policy this binding binds.', priority: 0, cell: (o) => stringAt(objectAt(o, 'spec'), 'policyName') },
    { name: 'ParamRef', type: 'string', description: 'The parameter resource(s) of the binding.', priority: 0, cell: (o) => paramRefCell(objectAt(o, 'spec')) },
  ],
  allowUnconditionalUpdate: false,
} satisfies KindStrategy;
