/**
 * MutatingAdmissionPolicy (admissionregistration.orch.io v1, v1beta1, v1alpha1): CEL mutations
 * (apply configurations or JSON patches) applied to the requests its matchConstraints select.
 * As in Kubernetes, rules that cover the policy kinds themselves are accepted and exempted at
 * admission time (ruleCoversResource), not rejected here.
 */
import { paramKindCell } from './admission-cells.js';
import { defaultPolicySpec, validatePolicySpecCommon } from './admission-policy.js';
import { validateMutatingOperations } from './admission-rules.js';
import { FieldPath, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { isSet, listAt, objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { atomicList, obj, str } from '../api/schema.js';
import { ADMISSION_V1, failurePolicySchema, matchConditionsSchema, matchResourcesSchema, paramKindSchema, reinvocationPolicySchema, variableSchema } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

export const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'] as const;
/** Kubernetes lists these in this order (not sorted) in its message. */
const MAP_REINVOCATION_POLICIES = ['Never', 'IfNeeded'] as const;

const mutationSchema = obj(
  `${ADMISSION_V1}.Mutation`,
  {
    applyConfiguration: obj(
      `${ADMISSION_V1}.ApplyConfiguration`,
      { expression: str('CEL expression returning an apply configuration (Object{…}) merged into the object with server-side apply rules.') },
      { description: 'A mutation as an apply configuration.' },
    ),
    jsonPatch: obj(`${ADMISSION_V1}.JSONPatch`, { expression: str('CEL expression returning a list of JSONPatch operations applied to the object.') }, { description: 'A mutation as a JSON patch.' }),
    patchType: str('ApplyConfiguration or JSONPatch; says which of the two fields carries the expression. Required.', { enum: [...PATCH_TYPES] }),
  },
  { required: ['patchType'], description: 'One mutation of a policy.' },
);

const specSchema = obj(
  `${ADMISSION_V1}.MutatingAdmissionPolicySpec`,
  {
    failurePolicy: failurePolicySchema,
    matchConditions: matchConditionsSchema('CEL filters on requests already matched by matchConstraints; at most 64.'),
    matchConstraints: {
      ...matchResourcesSchema,
      description: 'Required. The requests this policy applies to: CREATE, UPDATE and CONNECT ("*" is those three); DELETE cannot be matched.',
    },
    mutations: atomicList(mutationSchema, 'Mutations applied in order; at least one.'),
    paramKind: paramKindSchema,
    reinvocationPolicy: { ...reinvocationPolicySchema, description: 'Required. Never, or IfNeeded to run the mutations again after later mutations changed the object.' },
    variables: atomicList(variableSchema, 'Named expressions usable as `variables.<name>` in later variables and in mutations.'),
  },
  { description: 'Desired behaviour of a MutatingAdmissionPolicy.' },
);

const spec = FieldPath.root('spec');

/** patchType picks the one member of the mutation union that must be set; the other must not be. */
function validateMutation(m: unknown, p: FieldPath): FieldError[] {
  const patchType = stringAt(m, 'patchType');
  if (!patchType) return [required(p.child('patchType'), '')];
  const errs: FieldError[] = [];
  const member = (field: 'jsonPatch' | 'applyConfiguration', other: 'jsonPatch' | 'applyConfiguration') => {
    if (!isSet(m, field)) errs.push(required(p.child(field), `must be specified when patchType is ${patchType}`));
    else if (stringAt(objectAt(m, field), 'expression').trim() === '') errs.push(required(p.child(field, 'expression'), ''));
    if (isSet(m, other)) errs.push(invalid(p.child(other), `{${other}}`, `must not be specified when patchType is ${patchType}`));
  };
  if (patchType === 'JSONPatch') member('jsonPatch', 'applyConfiguration');
  else if (patchType === 'ApplyConfiguration') member('applyConfiguration', 'jsonPatch');
  else errs.push(notSupported(p.child('patchType'), patchType, PATCH_TYPES));
  return errs;
}

function validate(o: KubeObject): FieldError[] {
  const s = objectAt(o, 'spec');
  const errs = validatePolicySpecCommon(s, spec);
  errs.push(...validateMutatingOperations(objectAt(s, 'matchConstraints'), spec.child('matchConstraints')));
  const mutations = listAt(s, 'mutations');
  if (mutations.length === 0) errs.push(required(spec.child('mutations'), 'mutations must contain at least one item'));
  mutations.forEach((m, i) => errs.push(...validateMutation(m, spec.child('mutations').index(i))));
  const reinvocation = stringAt(s, 'reinvocationPolicy');
  if (!reinvocation) errs.push(required(spec.child('reinvocationPolicy'), ''));
  else if (!(MAP_REINVOCATION_POLICIES as readonly string[]).includes(reinvocation)) {
    errs.push(notSupported(spec.child('reinvocationPolicy'), reinvocation, MAP_REINVOCATION_POLICIES));
  }
  return errs;
}

export const mutatingAdmissionPolicy = {
  group: 'admissionregistration.orch.io',
  versions: ['v1', 'v1beta1', 'v1alpha1'],
  kind: 'MutatingAdmissionPolicy',
  listKind: 'MutatingAdmissionPolicyList',
  plural: 'mutatingadmissionpolicies',
  singular: 'mutatingadmissionpolicy',
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: false,
  schema: kindSchema(`${ADMISSION_V1}.MutatingAdmissionPolicy`, 'An admission policy that changes the objects of matching requests with CEL.', { spec: specSchema }),
  // reinvocationPolicy has no default: it is required in every version.
  applyDefaults: (o) => defaultPolicySpec(objectAt(o, 'spec')),
  validate,
  tableColumns: [
    { name: 'Mutations', type: 'integer', description: 'Number of mutations of the policy.', priority: 0, cell: (o) => listAt(objectAt(o, 'spec'), 'mutations').length },
    { name: 'ParamKind', type: 'string', description: 'Kind of the resources that parameterize the policy.', priority: 0, cell: (o) => paramKindCell(objectAt(o, 'spec')) },
  ],
  allowUnconditionalUpdate: false,
} satisfies KindStrategy;
