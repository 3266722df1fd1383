/**
 * The audit Policy (`--audit-policy-file`; Kubernetes' audit.k8s.io/v1 Policy, as audit.orch.io/v1):
 * which requests the audit log records, rule by rule, the first rule that matches a request deciding
 * its level. orchd records the None and Metadata levels (who did what to which object, and how it
 * was answered); a rule asking for Request or RequestResponse (the bodies) is refused, not quietly
 * recorded at Metadata.
 */
import { FieldPath, notSupported, required, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { arrayOf, bool, obj, str, type Schema } from '../api/schema.js';
import { objectsOf, optString, stringsOf } from './checks.js';
import { AUDIT_V1, type DocumentKind, type ReadContext } from './document.js';

export type AuditLevel = 'None' | 'Metadata';
export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof AUDIT_STAGES)[number];

export interface AuditRule {
  level: AuditLevel;
  /** Empty: any. */
  users: string[];
  userGroups: string[];
  verbs: string[];
  /** Empty: any resource; a resource request matches when one entry does. */
  resources: { group: string; resources: string[]; resourceNames: string[] }[];
  namespaces: string[];
  /** Paths of non-resource requests, a trailing `*` a prefix. */
  nonResourceURLs: string[];
  omitStages: AuditStage[];
}

export interface AuditPolicy {
  rules: AuditRule[];
  omitStages: AuditStage[];
}

/** Without a policy file, every request at Metadata. */
export const METADATA_FOR_ALL: AuditPolicy = {
  omitStages: [],
  rules: [{ level: 'Metadata', users: [], userGroups: [], verbs: [], resources: [], namespaces: [], nonResourceURLs: [], omitStages: [] }],
};

const strings = arrayOf(str());
const schema: Schema = obj(undefined, {
  apiVersion: str(),
  kind: str(),
  metadata: obj(undefined, { name: str() }),
  omitStages: strings,
  omitManagedFields: bool(),
  rules: arrayOf(
    obj(undefined, {
      level: str(),
      users: strings,
      userGroups: strings,
      verbs: strings,
      resources: arrayOf(obj(undefined, { group: str(), resources: strings, resourceNames: strings })),
      namespaces: strings,
      nonResourceURLs: strings,
      omitStages: strings,
      omitManagedFields: bool(),
    }),
  ),
});

function stagesOf(o: JsonObject, path: FieldPath, errs: FieldError[]): AuditStage[] {
  const stages = stringsOf(o, 'omitStages');
  stages.forEach((s, i) => {
    if (!(AUDIT_STAGES as readonly string[]).includes(s)) errs.push(notSupported(path.child('omitStages').index(i), s, AUDIT_STAGES));
  });
  return stages as AuditStage[];
}

function readPolicy(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: AuditPolicy; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const rules = objectsOf(doc, 'rules').map((r, i): AuditRule => {
    const path = root.child('rules').index(i);
    const level = optString(r, 'level');
    if (level === undefined || level === '') errs.push(required(path.child('level')));
    else if (level !== 'None' && level !== 'Metadata') {
      errs.push(notSupported(path.child('level'), level, level === 'Request' || level === 'RequestResponse' ? ['None', 'Metadata'] : ['None', 'Metadata', 'Request', 'RequestResponse']));
    }
    const resources = objectsOf(r, 'resources').map((g) => ({ group: optString(g, 'group') ?? '', resources: stringsOf(g, 'resources'), resourceNames: stringsOf(g, 'resourceNames') }));
    const nonResourceURLs = stringsOf(r, 'nonResourceURLs');
    if (nonResourceURLs.length > 0 && (resources.length > 0 || stringsOf(r, 'namespaces').length > 0)) {
      errs.push({ type: 'FieldValueInvalid', field: String(path.child('nonResourceURLs')), value: nonResourceURLs, detail: 'rules cannot apply to both regular resources and non-resource URLs' });
    }
    return {
      level: level as AuditLevel,
      users: stringsOf(r, 'users'),
      userGroups: stringsOf(r, 'userGroups'),
      verbs: stringsOf(r, 'verbs'),
      resources,
      namespaces: stringsOf(r, 'namespaces'),
      nonResourceURLs,
      omitStages: stagesOf(r, path, errs),
    };
  });
  return { value: { rules, omitStages: stagesOf(doc, root, errs) }, errors: errs };
}

export const auditPolicyDocument: DocumentKind<AuditPolicy> = {
  kind: 'Policy',
  groupVersions: [AUDIT_V1],
  schemas: { [AUDIT_V1]: schema },
  read: readPolicy,
};

/** What a request is, as a policy's rules ask. */
export interface AuditedRequest {
  user: { username: string; groups: readonly string[] };
  verb: string;
  /** Resource requests. */
  resource?: { group: string; resource: string; subresource?: string; namespace?: string; name?: string };
  /** Non-resource requests. */
  path?: string;
}

const anyOr = (list: readonly string[], value: string | undefined): boolean => list.length === 0 || (value !== undefined && list.includes(value));

function matches(rule: AuditRule, r: AuditedRequest): boolean {
  if (!anyOr(rule.users, r.user.username)) return false;
  if (rule.userGroups.length > 0 && !r.user.groups.some((g) => rule.userGroups.includes(g))) return false;
  if (!anyOr(rule.verbs, r.verb)) return false;
  if (!r.resource) {
    if (rule.resources.length > 0 || rule.namespaces.length > 0) return false;
    return rule.nonResourceURLs.length === 0 || rule.nonResourceURLs.some((u) => (u.endsWith('*') ? (r.path ?? '').startsWith(u.slice(0, -1)) : r.path === u));
  }
  if (rule.nonResourceURLs.length > 0) return false;
  const res = r.resource;
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(res.namespace ?? '')) return false;
  if (rule.resources.length === 0) return true;
  const named = res.subresource ? `${res.resource}/${res.subresource}` : res.resource;
  return rule.resources.some(
    (g) =>
      g.group === res.group &&
      (g.resources.length === 0 || g.resources.includes(named) || g.resources.includes('*') || g.resources.includes(`*/${res.subresource ?? ''}`) || g.resources.includes(`${res.resource}/*`)) &&
      anyOr(g.resourceNames, res.name),
  );
}

/** The level and the stages left out for a request: the first rule that matches it decides; none, None. */
export function auditLevelOf(policy: AuditPolicy, r: AuditedRequest): { level: AuditLevel; omitStages: readonly AuditStage[] } {
  const rule = policy.rules.find((x) => matches(x, r));
  return rule ? { level: rule.level, omitStages: [...policy.omitStages, ...rule.omitStages] } : { level: 'None', omitStages: policy.omitStages };
}
