/**
 * ValidatingAdmissionPolicy (admissionregistration.orch.io/v1): CEL validations and audit
 * annotations applied to the requests its matchConstraints select. Kubernetes exempts the policy
 * and binding kinds themselves at admission time (see ruleCoversResource); it does not reject rules
 * that cover them, and neither does orchd.
 */
import { paramKindCell } from './admission-cells.js';
import { defaultPolicySpec, validatePolicySpecCommon } from './admission-policy.js';
import { validateConditions } from './conditions.js';
import { FieldPath, duplicate, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { byteLength, isObject, listAt, objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { conditionsSchema } from './meta-schema.js';
import { isQualifiedName } from '../api/name-formats.js';
import { atomicList, int, mergeList, obj, str } from '../api/schema.js';
import { ADMISSION_V1, failurePolicySchema, matchConditionsSchema, matchResourcesSchema, paramKindSchema, variableSchema } from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

/** Reasons a validation may return. The API docs also list Unauthorized, but validation rejects it. */
export const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'] as const;
const MAX_AUDIT_ANNOTATIONS = 20;
/** Less than the 10 KiB an annotation value may reach: a concatenating expression grows its output. */
const MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024;

const validationSchema = obj(
  `${ADMISSION_V1}.Validation`,
  {
    expression: str('CEL expression that must evaluate to true for the request to pass.'),
    message: str('Fixed message returned when the expression is false; no line breaks.'),
    messageExpression: str('CEL expression producing the failure message; wins over message when it evaluates to a non-empty string.'),
    reason: str('Machine-readable reason of the failure: Forbidden, Invalid (default) or RequestEntityTooLarge.'),
  },
  { required: ['expression'], description: 'One CEL check of a policy.' },
);

const auditAnnotationSchema = obj(
  `${ADMISSION_V1}.AuditAnnotation`,
  {
    key: str('Key of the audit annotation, prefixed with "<policy name>/" when written; unique in the policy.'),
    valueExpression: str('CEL expression producing the annotation value (a string) or null to skip it; at most 5 KiB.'),
  },
  { required: ['key', 'valueExpression'], description: 'An annotation added to the audit event of matching requests.' },
);

const specSchema = obj(
  `${ADMISSION_V1}.ValidatingAdmissionPolicySpec`,
  {
    auditAnnotations: atomicList(auditAnnotationSchema, 'Audit annotations for matching requests; validations and auditAnnotations may not both be empty.'),
    failurePolicy: failurePolicySchema,
    matchConditions: matchConditionsSchema('CEL filters on requests already matched by matchConstraints; at most 64.'),
    matchConstraints: { ...matchResourcesSchema, description: 'Required. The requests this policy applies to.' },
    paramKind: paramKindSchema,
    validations: atomicList(validationSchema, 'CEL checks; validations and auditAnnotations may not both be empty.'),
    variables: mergeList(variableSchema, 'name', 'Named expressions usable as `variables.<name>` in later variables and in validations.'),
  },
  { description: 'Desired behaviour of a ValidatingAdmissionPolicy.' },
);

const expressionWarningSchema = obj(
  `${ADMISSION_V1}.ExpressionWarning`,
  { fieldRef: str('Path of the expression field, e.g. spec.validations[0].expression.'), warning: str('Type-checking result for that expression.') },
  { required: ['fieldRef', 'warning'], description: 'A type-checking warning of one expression.' },
);

const statusSchema = obj(
  `${ADMISSION_V1}.ValidatingAdmissionPolicyStatus`,
  {
    conditions: conditionsSchema('Latest observations of the policy state.'),
    observedGeneration: int('Generation the controller observed.', 'int64'),
    typeChecking: obj(
      `${ADMISSION_V1}.TypeChecking`,
      { expressionWarnings: atomicList(expressionWarningSchema, 'Warnings per expression.') },
      { description: 'Results of type checking; present once it completed.' },
    ),
  },
  { description: 'Written by the system; read-only for clients.' },
);

const spec = FieldPath.root('spec');

function validateValidation(v: unknown, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (stringAt(v, 'expression').trim() === '') errs.push(required(p.child('expression'), 'expression is not specified'));
  const messageExpression = stringAt(v, 'messageExpression');
  if (messageExpression && messageExpression.trim() === '') errs.push(invalid(p.child('messageExpression'), messageExpression, 'must be non-empty if specified'));
  const message = stringAt(v, 'message');
  if (message && message.trim() === '') errs.push(invalid(p.child('message'), message, 'message must be non-empty if specified'));
  else if (/[\n\r]/.test(message.trim())) errs.push(invalid(p.child('message'), message, 'message must not contain line breaks'));
  const reason = isObject(v) ? v.reason : undefined;
  if (reason !== undefined && reason !== null && !(VALIDATION_REASONS as readonly unknown[]).includes(reason)) {
    errs.push(notSupported(p.child('reason'), reason, VALIDATION_REASONS));
  }
  return errs;
}

/** An audit annotation key becomes "<policy name>/<key>", which must be a qualified name. */
function validateAuditAnnotation(a: unknown, policyName: string, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const key = stringAt(a, 'key');
  if (policyName) errs.push(...isQualifiedName(`${policyName}/${key}`).map((m) => invalid(p.child('key'), `${policyName}/${key}`, m)));
  else errs.push(invalid(p.child('key'), key, 'requires metadata.name be non-empty'));
  const valueExpression = stringAt(a, 'valueExpression').trim();
  if (valueExpression === '') errs.push(required(p.child('valueExpression'), 'valueExpression is not specified'));
  else if (byteLength(valueExpression) > MAX_AUDIT_VALUE_EXPRESSION) {
    // Kubernetes reports the length limit as a Required error; kept for identical output.
    errs.push(required(p.child('valueExpression'), `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION} bytes in length`));
  }
  return errs;
}

function validateSpec(obj: KubeObject): FieldError[] {
  const s = objectAt(obj, 'spec');
  const errs = validatePolicySpecCommon(s, spec);
  const validations = listAt(s, 'validations');
  const audits = listAt(s, 'auditAnnotations');
  if (validations.length === 0 && audits.length === 0) {
    errs.push(required(spec.child('validations'), 'validations or auditAnnotations must contain at least one item'));
    errs.push(required(spec.child('auditAnnotations'), 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  validations.forEach((v, i) => errs.push(...validateValidation(v, spec.child('validations').index(i))));
  if (audits.length > MAX_AUDIT_ANNOTATIONS) errs.push(invalid(spec.child('auditAnnotations'), audits, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const keys = new Set<string>();
  audits.forEach((a, i) => {
    const ap = spec.child('auditAnnotations').index(i);
    errs.push(...validateAuditAnnotation(a, stringAt(obj.metadata, 'name'), ap));
    const key = stringAt(a, 'key');
    if (keys.has(key)) errs.push(duplicate(ap.child('key'), key));
    keys.add(key);
  });
  return errs;
}

/** status: every type-checking warning names its field and says something; conditions are valid. */
function validateStatus(obj: KubeObject): FieldError[] {
  const st = FieldPath.root('status');
  const status = objectAt(obj, 'status');
  const errs: FieldError[] = [];
  listAt(objectAt(status, 'typeChecking'), 'expressionWarnings').forEach((w, i) => {
    const wp = st.child('typeChecking', 'expressionWarnings').index(i);
    if (!stringAt(w, 'warning')) errs.push(required(wp.child('warning'), ''));
    if (stringAt(w, 'fieldRef').trim() === '') errs.push(required(wp.child('fieldRef'), ''));
  });
  errs.push(...validateConditions(listAt(status, 'conditions'), st.child('conditions')));
  return errs;
}

export const validatingAdmissionPolicy = {
  group: 'admissionregistration.orch.io',
  versions: ['v1'],
  kind: 'ValidatingAdmissionPolicy',
  listKind: 'ValidatingAdmissionPolicyList',
  plural: 'validatingadmissionpolicies',
  singular: 'validatingadmissionpolicy',
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: true,
  schema: kindSchema(`${ADMISSION_V1}.ValidatingAdmissionPolicy`, 'An admission policy that accepts or rejects requests with CEL, without changing them.', {
    spec: specSchema,
    status: statusSchema,
  }),
  applyDefaults: (o) => defaultPolicySpec(objectAt(o, 'spec')),
  validate: validateSpec,
  validateStatusUpdate: (o) => validateStatus(o),
  tableColumns: [
    { name: 'Validations', type: 'integer', description: 'Number of validation rules of the policy.', priority: 0, cell: (o) => listAt(objectAt(o, 'spec'), 'validations').length },
    { name: 'ParamKind', type: 'string', description: 'Kind of the resources that parameterize the policy.', priority: 0, cell: (o) => paramKindCell(objectAt(o, 'spec')) },
  ],
  allowUnconditionalUpdate: false,
} satisfies KindStrategy;
