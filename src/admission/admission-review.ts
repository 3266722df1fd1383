/**
 * The AdmissionReview a webhook is sent (admission.orch.io, v1 or v1beta1: the first of the
 * webhook's admissionReviewVersions this server speaks) and the checks its answer must pass, as
 * Kubernetes' webhook request package makes and verifies them. A v1 answer must be a v1
 * AdmissionReview echoing the request's uid, with patch and patchType together; v1beta1 answers
 * were never checked that closely, and their patch is taken as a JSONPatch.
 *
 *   request: { uid, kind, resource, subResource?, requestKind, requestResource, requestSubResource?,
 *              name?, namespace?, operation, userInfo, object, oldObject, dryRun, options }
 *   response: { uid, allowed, status?, patch? (base64), patchType?, warnings?, auditAnnotations? }
 */
import { isObject, type JsonObject } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { AdmissionAttributes } from './attributes.js';

export const ADMISSION_GROUP = 'admission.orch.io';
export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

/** The first version the webhook accepts that this server speaks. */
export const reviewVersionFor = (accepted: readonly string[]): ReviewVersion | undefined => accepted.find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));

/** What the webhook is called for: the request's resource, or an equivalent version of it (matchPolicy Equivalent). */
export interface Invocation {
  kind: KindStrategy;
  version: string;
}

const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

/** The object as the invoked version shows it (versions of an orchd kind differ in apiVersion only). */
export const asVersion = (o: KubeObject, kind: KindStrategy, version: string): KubeObject => ({ ...o, apiVersion: apiVersionOf(kind.group, version) });

/** The options of the request, as Kubernetes passes CreateOptions, UpdateOptions or DeleteOptions. */
function optionsOf(a: AdmissionAttributes): JsonObject {
  const kind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: 'ConnectOptions' }[a.operation];
  return { kind, apiVersion: 'meta.k8s.io/v1', ...(a.dryRun ? { dryRun: ['All'] } : {}) };
}

export function admissionReview(version: ReviewVersion, uid: string, inv: Invocation, a: AdmissionAttributes, object: KubeObject | null): JsonObject {
  const { kind } = a;
  const u = a.user;
  const userInfo = {
    ...(u.username ? { username: u.username } : {}),
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.groups.length ? { groups: u.groups } : {}),
    ...(Object.keys(u.extra).length ? { extra: u.extra } : {}),
  };
  const sub = a.subresource ? { subResource: a.subresource } : {};
  return {
    apiVersion: `${ADMISSION_GROUP}/${version}`,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: kind.group, version: inv.version, kind: kind.kind },
      resource: { group: kind.group, version: inv.version, resource: kind.plural },
      ...sub,
      requestKind: { group: kind.group, version: a.version, kind: kind.kind },
      requestResource: { group: kind.group, version: a.version, resource: kind.plural },
      ...(a.subresource ? { requestSubResource: a.subresource } : {}),
      ...(a.name ? { name: a.name } : {}),
      ...(a.namespace ? { namespace: a.namespace } : {}),
      operation: a.operation,
      userInfo,
      object: object && asVersion(object, kind, inv.version),
      oldObject: a.oldObject && asVersion(a.oldObject, kind, inv.version),
      dryRun: a.dryRun,
      options: optionsOf(a),
    },
  };
}

export interface AdmissionResponse {
  allowed: boolean;
  /** The decoded patch bytes (JSON text), when the webhook sent one. */
  patch?: Buffer;
  patchType?: string;
  /** The webhook's metav1.Status, for a denial. */
  result?: unknown;
  warnings: string[];
}

const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((w): w is string => typeof w === 'string') : []);

/** Kubernetes' VerifyAdmissionResponse for a mutating webhook; throws with its wording. */
export function verifyAdmissionResponse(version: ReviewVersion, uid: string, review: unknown): AdmissionResponse {
  const body = isObject(review) ? review : {};
  const r = body.response;
  if (!isObject(r)) throw new Error('webhook response was absent');
  const patchText = typeof r.patch === 'string' ? r.patch : '';
  const base = { allowed: r.allowed === true, result: r.status, warnings: stringList(r.warnings) };
  const patch = patchText ? Buffer.from(patchText, 'base64') : undefined;
  if (version === 'v1beta1') return { ...base, ...(patch?.length ? { patch, patchType: 'JSONPatch' } : {}) };

  const got = typeof r.uid === 'string' ? r.uid : '';
  if (got !== uid) throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}`);
  const want = `${ADMISSION_GROUP}/v1, Kind=AdmissionReview`;
  const gvk = `${typeof body.apiVersion === 'string' ? body.apiVersion : ''}, Kind=${typeof body.kind === 'string' ? body.kind : ''}`;
  if (gvk !== want) throw new Error(`expected webhook response of ${want}, got ${gvk}`);
  const patchType = r.patchType;
  if (patch?.length && (patchType === undefined || patchType === null)) throw new Error('webhook returned response.patch but not response.patchType');
  if (!patch?.length && patchType !== undefined && patchType !== null) throw new Error('webhook returned response.patchType but not response.patch');
  if (patchType !== undefined && patchType !== null && (typeof patchType !== 'string' || patchType === '')) {
    throw new Error(`webhook returned invalid response.patchType of ${JSON.stringify(patchType)}`);
  }
  return { ...base, ...(patch?.length ? { patch, patchType: patchType as string } : {}) };
}
