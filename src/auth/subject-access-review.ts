/**
 * The SubjectAccessReview a webhook authorizer sends (authorization.orch.io v1 or v1beta1) and
 * the decision read back from its status, as Kubernetes' webhook authorizer builds and reads them.
 *
 * The spec is built in v1 form (what match conditions see and the cache is keyed by); v1beta1
 * differs on the wire only by naming the groups `group`. Empty fields are left out, as Go's
 * omitempty leaves them out. Field and label selectors travel as parsed requirements, never as the
 * raw text (Kubernetes' KEP-4601: webhooks must not have to parse selectors); a selector that does
 * not parse, or operators a requirement cannot say (`>`, `<`), only widen the request, so they are
 * dropped.
 */
import { parseFieldSelector } from '../selectors/field-selector.js';
import { parseLabelSelector } from '../selectors/label-selector.js';
import type { AuthorizationAttributes, AuthorizationDecision } from '../api/authorization.js';

export type SubjectAccessReviewVersion = 'v1' | 'v1beta1';

interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  fieldSelector?: { requirements: SelectorRequirement[] };
  labelSelector?: { requirements: SelectorRequirement[] };
}

/** authorization.orch.io/v1 SubjectAccessReviewSpec. */
export interface SubjectAccessReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

/** Copies only the set (non-empty) values, in the given key order. */
function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

function fieldRequirements(raw: string | undefined): SelectorRequirement[] {
  if (!raw) return [];
  try {
    return parseFieldSelector(raw).map((r) => ({ key: r.field, operator: r.op === '=' ? 'In' : 'NotIn', values: [r.value] }));
  } catch {
    return [];
  }
}

function labelRequirements(raw: string | undefined): SelectorRequirement[] {
  if (!raw) return [];
  let parsed;
  try {
    parsed = parseLabelSelector(raw);
  } catch {
    return [];
  }
  const out: SelectorRequirement[] = [];
  for (const r of parsed) {
    const operator = ({ '=': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!': 'DoesNotExist' } as const)[r.op as string];
    if (!operator) continue;
    out.push({ key: r.key, operator, ...(r.values.length > 0 ? { values: r.values } : {}) });
  }
  return out;
}

export function subjectAccessReviewSpec(a: AuthorizationAttributes): SubjectAccessReviewSpec {
  const field = fieldRequirements(a.fieldSelector);
  const label = labelRequirements(a.labelSelector);
  return compact({
    ...(a.isResourceRequest
      ? {
          resourceAttributes: compact({
            namespace: a.namespace,
            verb: a.verb,
            group: a.apiGroup,
            version: a.apiVersion,
            resource: a.resource,
            subresource: a.subresource,
            name: a.name,
            ...(field.length > 0 ? { fieldSelector: { requirements: field } } : {}),
            ...(label.length > 0 ? { labelSelector: { requirements: label } } : {}),
          }),
        }
      : { nonResourceAttributes: compact({ path: a.path, verb: a.verb }) }),
    user: a.user.username,
    groups: a.user.groups ?? [],
    extra: a.user.extra ?? {},
    uid: a.user.uid,
  });
}

/** The request body in the configured version. */
export function subjectAccessReviewBody(spec: SubjectAccessReviewSpec, version: SubjectAccessReviewVersion): object {
  let wire: object = spec;
  if (version === 'v1beta1') {
    const { groups, ...rest } = spec;
    wire = { ...rest, ...(groups ? { group: groups } : {}) };
  }
  return { apiVersion: `authorization.orch.io/${version}`, kind: 'SubjectAccessReview', metadata: {}, spec: wire };
}

/**
 * The `request` variable of match conditions: the v1 spec with every attribute present (an empty
 * string rather than a missing key), as Kubernetes converts it, so `request.resourceAttributes.name
 * == ''` works; the attributes of the other kind of request are absent (`has()` tells them apart).
 */
export function matchConditionRequest(spec: SubjectAccessReviewSpec): Record<string, unknown> {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  return {
    user: spec.user ?? '',
    groups: spec.groups ?? [],
    uid: spec.uid ?? '',
    extra: spec.extra ?? {},
    ...(r
      ? {
          resourceAttributes: {
            namespace: r.namespace ?? '',
            verb: r.verb ?? '',
            group: r.group ?? '',
            version: r.version ?? '',
            resource: r.resource ?? '',
            subresource: r.subresource ?? '',
            name: r.name ?? '',
            ...(r.fieldSelector ? { fieldSelector: r.fieldSelector } : {}),
            ...(r.labelSelector ? { labelSelector: r.labelSelector } : {}),
          },
        }
      : {}),
    ...(n ? { nonResourceAttributes: { path: n.path ?? '', verb: n.verb ?? '' } } : {}),
  };
}

export interface ReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
}

/**
 * The status of a webhook's answer (a missing `allowed` is false, as Go decodes it); throws when
 * the answer has no status at all: a malformed answer falls under the failure policy.
 */
export function reviewStatus(body: unknown): ReviewStatus {
  const status = typeof body === 'object' && body !== null ? (body as { status?: unknown }).status : undefined;
  if (typeof status !== 'object' || status === null) throw new Error('the webhook answered without a SubjectAccessReview status');
  const s = status as { allowed?: unknown; denied?: unknown; reason?: unknown };
  return { allowed: s.allowed === true, denied: s.denied === true, reason: typeof s.reason === 'string' ? s.reason : '' };
}

/** Kubernetes' reading of the status: denied wins over allowed, and both at once is an error. */
export function decisionOf(s: ReviewStatus): AuthorizationDecision {
  const reason = s.reason ? { reason: s.reason } : {};
  if (s.denied && s.allowed) return { decision: 'deny', ...reason, error: 'webhook subject access review returned both allow and deny response' };
  if (s.denied) return { decision: 'deny', ...reason };
  if (s.allowed) return { decision: 'allow', ...reason };
  return { decision: 'noOpinion', ...reason };
}
