/**
 * MutatingWebhookConfiguration (admissionregistration.orch.io/v1): webhooks called to mutate
 * matching requests. On update, some rules only hold if the stored object already met them
 * (Kubernetes' ratcheting), so objects written under looser rules stay updatable.
 */
import { defaultRuleScopes } from './admission-defaults.js';
import { validateMatchConditions } from './admission-expressions.js';
import { validateOptionalFailurePolicy } from './admission-params.js';
import { validateRuleWithOperations } from './admission-rules.js';
import { FieldPath, duplicate, invalid, notSupported, required, type FieldError } from '../api/field-errors.js';
import { defaultField, isObject, isSet, listAt, objectAt, stringAt, stringsOf } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { labelSelectorHasInvalidValue, validateLabelSelector } from './labels.js';
import { labelSelectorSchema } from './meta-schema.js';
import { isDNS1035Label, isFullyQualifiedName } from '../api/name-formats.js';
import { atomicList, int, mergeList, obj, str } from '../api/schema.js';
import {
  ADMISSION_V1,
  MATCH_POLICIES,
  REINVOCATION_POLICIES,
  failurePolicySchema,
  matchConditionsSchema,
  matchPolicySchema,
  reinvocationPolicySchema,
  ruleWithOperationsSchema,
} from './shared-types.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { validateClientConfig } from './webhook-client-config.js';

/** AdmissionReview versions an API server of the previous release understands. */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'] as const;
/** v1 accepts only webhooks without side effects (or that skip them on dry run). */
const NO_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'] as const;

const serviceReferenceSchema = obj(
  `${ADMISSION_V1}.ServiceReference`,
  {
    name: str('Name of the service. Required.'),
    namespace: str('Namespace of the service. Required.'),
    path: str('URL path requests are sent to.'),
    port: int('Port of the service, 443 by default; 1-65535.'),
  },
  { required: ['namespace', 'name'], description: 'A service the webhook is reached through.' },
);

const clientConfigSchema = obj(
  `${ADMISSION_V1}.WebhookClientConfig`,
  {
    caBundle: str('PEM-encoded CA bundle to verify the webhook server certificate; the system trust roots when empty.', { format: 'byte' }),
    service: serviceReferenceSchema,
    url: str('https URL of the webhook (no user info, query or fragment); exactly one of url and service.'),
  },
  { description: 'How to connect to the webhook.' },
);

const webhookSchema = obj(
  `${ADMISSION_V1}.MutatingWebhook`,
  {
    admissionReviewVersions: atomicList(str(), 'AdmissionReview versions the webhook accepts, in order of preference; must include one this server accepts (v1, v1beta1).'),
    clientConfig: clientConfigSchema,
    failurePolicy: failurePolicySchema,
    matchConditions: matchConditionsSchema('CEL filters on requests already matched by rules and selectors; at most 64.'),
    matchPolicy: matchPolicySchema,
    name: str('Name of the webhook, a fully qualified name with at least three segments (e.g. imagepolicy.example.com). Required.'),
    namespaceSelector: { ...labelSelectorSchema, description: 'Selects by the labels of the namespace of the object; empty matches all.' },
    objectSelector: { ...labelSelectorSchema, description: 'Selects by the labels of the object; empty matches all.' },
    reinvocationPolicy: reinvocationPolicySchema,
    rules: atomicList(ruleWithOperationsSchema, 'Operations and resources the webhook cares about; it is called when any rule matches.'),
    sideEffects: str('None or NoneOnDryRun: whether calling the webhook has side effects outside the object. Required.', { enum: [...SIDE_EFFECT_CLASSES] }),
    timeoutSeconds: int('Seconds to wait for the webhook, 1-30; 10 by default.'),
  },
  { required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'], description: 'One mutating admission webhook.' },
);

interface Options {
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
}

const strict: Options = {
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
  allowInvalidLabelValueInSelector: false,
};

/** The rules an update keeps only if the stored configuration already met them. */
function ratchetFrom(old: KubeObject): Options {
  const hooks = listAt(old, 'webhooks');
  const names = hooks.map((h) => stringAt(h, 'name'));
  return {
    requireNoSideEffects: hooks.every((h) => (NO_SIDE_EFFECT_CLASSES as readonly string[]).includes(stringAt(h, 'sideEffects'))),
    requireRecognizedAdmissionReviewVersion: hooks.every((h) => {
      const versions = stringsOf(listAt(h, 'admissionReviewVersions'));
      return versions.length === 0 || versions.some((v) => (ACCEPTED_ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v));
    }),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: hooks.some((h) => labelSelectorHasInvalidValue(objectAt(h, 'namespaceSelector')) || labelSelectorHasInvalidValue(objectAt(h, 'objectSelector'))),
  };
}

const checkEnum = (holder: unknown, field: string, allowed: readonly string[], p: FieldPath): FieldError[] => {
  if (!isObject(holder) || !isSet(holder, field)) return [];
  return allowed.includes(holder[field] as string) ? [] : [notSupported(p.child(field), holder[field], allowed)];
};

function validateAdmissionReviewVersions(versions: string[], requireRecognized: boolean, p: FieldPath): FieldError[] {
  const accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ');
  if (versions.length === 0) return [required(p, `must specify one of ${accepted}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let recognized = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(p.index(i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    errs.push(...isDNS1035Label(v).map((m) => invalid(p.index(i), v, m)));
    if ((ACCEPTED_ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v)) recognized = true;
  });
  if (requireRecognized && !recognized) errs.push(invalid(p, versions, `must include at least one of ${accepted}`));
  return errs;
}

function validateWebhook(hook: unknown, opts: Options, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(hook, 'name');
  if (!name) errs.push(required(p.child('name'), ''));
  else errs.push(...isFullyQualifiedName(name).map((m) => invalid(p.child('name'), name, m)));
  listAt(hook, 'rules').forEach((r, i) => errs.push(...validateRuleWithOperations(r, p.child('rules').index(i))));
  errs.push(...validateOptionalFailurePolicy(hook, p.child('failurePolicy')));
  errs.push(...checkEnum(hook, 'matchPolicy', MATCH_POLICIES, p));
  const allowedSideEffects: readonly string[] = opts.requireNoSideEffects ? NO_SIDE_EFFECT_CLASSES : SIDE_EFFECT_CLASSES;
  if (!isSet(hook, 'sideEffects')) errs.push(required(p.child('sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`));
  else errs.push(...checkEnum(hook, 'sideEffects', allowedSideEffects, p));
  const timeout = isObject(hook) ? hook.timeoutSeconds : undefined;
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1)) errs.push(invalid(p.child('timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'));
  const selectorOpts = { allowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector };
  errs.push(...validateLabelSelector(objectAt(hook, 'namespaceSelector'), p.child('namespaceSelector'), selectorOpts));
  errs.push(...validateLabelSelector(objectAt(hook, 'objectSelector'), p.child('objectSelector'), selectorOpts));
  errs.push(...checkEnum(hook, 'reinvocationPolicy', REINVOCATION_POLICIES, p));
  errs.push(...validateClientConfig(objectAt(hook, 'clientConfig'), p.child('clientConfig')));
  errs.push(...validateMatchConditions(listAt(hook, 'matchConditions'), p.child('matchConditions')));
  return errs;
}

function validateWith(o: KubeObject, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  listAt(o, 'webhooks').forEach((hook, i) => {
    const hp = FieldPath.root('webhooks').index(i);
    errs.push(...validateWebhook(hook, opts, hp));
    errs.push(...validateAdmissionReviewVersions(stringsOf(listAt(hook, 'admissionReviewVersions')), opts.requireRecognizedAdmissionReviewVersion, hp.child('admissionReviewVersions')));
    const name = stringAt(hook, 'name');
    if (opts.requireUniqueWebhookNames && name) {
      if (names.has(name)) errs.push(duplicate(hp.child('name'), name));
      names.add(name);
    }
  });
  return errs;
}

/** v1 webhook defaults: Fail, Equivalent, match-all selectors, 10 s, Never, rule scope "*", port 443. */
function defaultWebhook(hook: unknown): void {
  if (!isObject(hook)) return;
  defaultField(hook, 'failurePolicy', 'Fail');
  defaultField(hook, 'matchPolicy', 'Equivalent');
  defaultField(hook, 'namespaceSelector', {});
  defaultField(hook, 'objectSelector', {});
  defaultField(hook, 'timeoutSeconds', 10);
  defaultField(hook, 'reinvocationPolicy', 'Never');
  defaultRuleScopes(listAt(hook, 'rules'));
  const svc = objectAt(objectAt(hook, 'clientConfig'), 'service');
  if (svc) defaultField(svc, 'port', 443);
}

export const mutatingWebhookConfiguration = {
  group: 'admissionregistration.orch.io',
  versions: ['v1'],
  kind: 'MutatingWebhookConfiguration',
  listKind: 'MutatingWebhookConfigurationList',
  plural: 'mutatingwebhookconfigurations',
  singular: 'mutatingwebhookconfiguration',
  categories: ['api-extensions'],
  namespaced: false,
  hasStatus: false,
  schema: kindSchema(`${ADMISSION_V1}.MutatingWebhookConfiguration`, 'Admission webhooks that may change the objects of matching requests.', {
    webhooks: mergeList(webhookSchema, 'name', 'The webhooks and the resources and operations each one cares about.'),
  }),
  applyDefaults(o) {
    listAt(o, 'webhooks').forEach(defaultWebhook);
  },
  validate: (o) => validateWith(o, strict),
  validateUpdate: (o, old) => validateWith(o, ratchetFrom(old)),
  tableColumns: [{ name: 'Webhooks', type: 'integer', description: 'Number of webhooks of the configuration.', priority: 0, cell: (o) => listAt(o, 'webhooks').length }],
} satisfies KindStrategy;
