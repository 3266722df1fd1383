/**
 * AuthorizationConfiguration (apiserver.orch.io/v1beta1 and apiserver.config.orch.io/v1): the ordered
 * authorizer chain. Validation follows kube-apiserver's: known types, Webhook the only repeatable one,
 * unique names (DNS-1123 labels, as the spec asks), and for webhooks the TTLs, a timeout in (0s, 30s],
 * the SubjectAccessReview versions, the failure policy, the connection and at most 64 match conditions.
 *
 * Match condition expressions are only required to be non-empty and unique here; compiling them
 * against the SubjectAccessReview comes with the CEL issue (9).
 */
import { FieldPath, duplicate, invalid, notSupported, required, tooMany, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { isDNS1123Label } from '../api/field-errors.js';
import { arrayOf, bool, obj, str, type Schema } from '../api/schema.js';
import { Seen, durationOf, formatDuration, objectOf, objectsOf, optBool, optString, regularFileErrors, stringOf } from './checks.js';
import { V1, V1BETA1, type DocumentKind, type ReadContext } from './document.js';

export const AUTHORIZER_TYPES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Webhook'] as const;
export type AuthorizerType = (typeof AUTHORIZER_TYPES)[number];
/** Types that may appear more than once in the chain. */
const REPEATABLE_TYPES: ReadonlySet<string> = new Set(['Webhook']);
export const MAX_MATCH_CONDITIONS = 64;
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

export type WebhookConnectionInfo = { type: 'InClusterConfig' } | { type: 'KubeConfigFile'; clusterConfigFile: string };

export interface WebhookConfiguration {
  authorizedTTLMs: number;
  /** v1 only; always true when read from v1beta1. */
  cacheAuthorizedRequests: boolean;
  unauthorizedTTLMs: number;
  cacheUnauthorizedRequests: boolean;
  timeoutMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  /** Set whenever matchConditions is not empty. */
  matchConditionSubjectAccessReviewVersion?: 'v1';
  failurePolicy: 'NoOpinion' | 'Deny';
  connectionInfo: WebhookConnectionInfo;
  /** Empty: the webhook sees every request. */
  matchConditions: { expression: string }[];
}
export interface AuthorizerConfiguration {
  type: AuthorizerType;
  name: string;
  webhook?: WebhookConfiguration;
}
export interface AuthorizationConfiguration {
  authorizers: AuthorizerConfiguration[];
}

function schemaFor(v1: boolean): Schema {
  const webhook: Record<string, Schema> = {
    authorizedTTL: str(),
    unauthorizedTTL: str(),
    timeout: str(),
    subjectAccessReviewVersion: str(),
    matchConditionSubjectAccessReviewVersion: str(),
    failurePolicy: str(),
    connectionInfo: obj(undefined, { type: str(), clusterConfigFile: str() }),
    matchConditions: arrayOf(obj(undefined, { expression: str() })),
  };
  if (v1) {
    webhook.cacheAuthorizedRequests = bool();
    webhook.cacheUnauthorizedRequests = bool();
  }
  return obj(undefined, {
    apiVersion: str(),
    kind: str(),
    authorizers: arrayOf(obj(undefined, { type: str(), name: str(), webhook: obj(undefined, webhook) })),
  });
}

/** A TTL: required (non-zero) and not negative. */
function readTTL(o: JsonObject, key: string, path: FieldPath, errs: FieldError[]): number {
  const ms = durationOf(o, key, path, errs);
  if (ms === undefined || ms === 0) {
    if (optString(o, key) === undefined || ms === 0) errs.push(required(path));
    return 0;
  }
  if (ms < 0) errs.push(invalid(path, formatDuration(ms), 'must be > 0s'));
  return ms;
}

function readConnectionInfo(o: JsonObject | undefined, path: FieldPath, errs: FieldError[]): WebhookConnectionInfo {
  const type = stringOf(o, 'type');
  const file = optString(o, 'clusterConfigFile');
  const filePath = path.child('clusterConfigFile');
  switch (type) {
    case '':
      errs.push(required(path.child('type')));
      break;
    case 'InClusterConfig':
      if (file !== undefined) errs.push(invalid(filePath, file, 'can only be set when type=KubeConfigFile'));
      return { type };
    case 'KubeConfigFile':
      if (!file) errs.push(required(filePath));
      else errs.push(...regularFileErrors(file, filePath));
      return { type, clusterConfigFile: file ?? '' };
    default:
      errs.push(notSupported(path.child('type'), type, ['InClusterConfig', 'KubeConfigFile']));
  }
  return { type: 'InClusterConfig' };
}

function readWebhook(o: JsonObject, path: FieldPath, errs: FieldError[]): WebhookConfiguration {
  const timeoutMs = durationOf(o, 'timeout', path.child('timeout'), errs);
  if (timeoutMs === 0 || (timeoutMs === undefined && optString(o, 'timeout') === undefined)) errs.push(required(path.child('timeout')));
  else if (timeoutMs !== undefined && (timeoutMs > MAX_WEBHOOK_TIMEOUT_MS || timeoutMs < 0)) {
    errs.push(invalid(path.child('timeout'), formatDuration(timeoutMs), 'must be > 0s and <= 30s'));
  }
  const authorizedTTLMs = readTTL(o, 'authorizedTTL', path.child('authorizedTTL'), errs);
  const unauthorizedTTLMs = readTTL(o, 'unauthorizedTTL', path.child('unauthorizedTTL'), errs);

  const sarVersion = stringOf(o, 'subjectAccessReviewVersion');
  if (sarVersion === '') errs.push(required(path.child('subjectAccessReviewVersion')));
  else if (sarVersion !== 'v1' && sarVersion !== 'v1beta1') errs.push(notSupported(path.child('subjectAccessReviewVersion'), sarVersion, ['v1', 'v1beta1']));

  const conditions = objectsOf(o, 'matchConditions');
  const mcVersion = stringOf(o, 'matchConditionSubjectAccessReviewVersion');
  if (mcVersion === '') {
    if (conditions.length > 0) errs.push(required(path.child('matchConditionSubjectAccessReviewVersion'), 'required if match conditions are specified'));
  } else if (mcVersion !== 'v1') errs.push(notSupported(path.child('matchConditionSubjectAccessReviewVersion'), mcVersion, ['v1']));

  const failurePolicy = stringOf(o, 'failurePolicy');
  if (failurePolicy === '') errs.push(required(path.child('failurePolicy')));
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny') errs.push(notSupported(path.child('failurePolicy'), failurePolicy, ['NoOpinion', 'Deny']));

  const connectionInfo = readConnectionInfo(objectOf(o, 'connectionInfo'), path.child('connectionInfo'), errs);

  const matchConditions: { expression: string }[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path.child('matchConditions'), conditions.length, MAX_MATCH_CONDITIONS));
  else {
    const seen = new Seen();
    conditions.forEach((c, i) => {
      const p = path.child('matchConditions').index(i).child('expression');
      const expression = stringOf(c, 'expression');
      if (expression.trim() === '') errs.push(required(p));
      else if (seen.repeat(expression)) errs.push(duplicate(p, expression));
      matchConditions.push({ expression });
    });
  }

  return {
    authorizedTTLMs,
    cacheAuthorizedRequests: optBool(o, 'cacheAuthorizedRequests') ?? true,
    unauthorizedTTLMs,
    cacheUnauthorizedRequests: optBool(o, 'cacheUnauthorizedRequests') ?? true,
    timeoutMs: timeoutMs ?? 0,
    subjectAccessReviewVersion: sarVersion as 'v1' | 'v1beta1',
    ...(mcVersion ? { matchConditionSubjectAccessReviewVersion: 'v1' as const } : {}),
    failurePolicy: failurePolicy as 'NoOpinion' | 'Deny',
    connectionInfo,
    matchConditions,
  };
}

function readAuthorization(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: AuthorizationConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const list = objectsOf(doc, 'authorizers');
  if (list.length === 0) errs.push(required(root.child('authorizers'), 'at least one authorization mode must be defined'));
  const seenTypes = new Seen();
  const seenNames = new Seen();
  const authorizers: AuthorizerConfiguration[] = [];
  list.forEach((a, i) => {
    const p = root.child('authorizers').index(i);
    const type = stringOf(a, 'type');
    if (type === '') return errs.push(required(p.child('type')));
    if (!(AUTHORIZER_TYPES as readonly string[]).includes(type)) return errs.push(notSupported(p.child('type'), type, AUTHORIZER_TYPES));
    if (seenTypes.repeat(type) && !REPEATABLE_TYPES.has(type)) return errs.push(duplicate(p.child('type'), type));

    const name = stringOf(a, 'name');
    if (name === '') errs.push(required(p.child('name')));
    else if (seenNames.repeat(name)) errs.push(duplicate(p.child('name'), name));
    else {
      const bad = isDNS1123Label(name);
      if (bad.length) errs.push(invalid(p.child('name'), name, `authorizer name is invalid: ${bad.join(', ')}`));
    }

    const webhookObj = objectOf(a, 'webhook');
    let webhook: WebhookConfiguration | undefined;
    if (type === 'Webhook') {
      if (!webhookObj) errs.push(required(p.child('webhook'), 'required when type=Webhook'));
      else webhook = readWebhook(webhookObj, p.child('webhook'), errs);
    } else if (webhookObj) {
      errs.push(invalid(p.child('webhook'), 'non-null', 'may only be specified when type=Webhook'));
    }
    authorizers.push({ type: type as AuthorizerType, name, ...(webhook ? { webhook } : {}) });
  });
  return { value: { authorizers }, errors: errs };
}

export const authorizationDocument: DocumentKind<AuthorizationConfiguration> = {
  kind: 'AuthorizationConfiguration',
  schemas: { [V1BETA1]: schemaFor(false), [V1]: schemaFor(true) },
  read: readAuthorization,
};
