/**
 * DeleteOptions, from the query or the body of a DELETE, parsed and validated as kube-apiserver does
 * (ValidateDeleteOptions), with the query helpers of query.ts.
 */
import { invalid as invalidValue, notSupported, type FieldError } from '../../api/field-errors.js';
import { badRequest, type ApiError } from '../respond/status.js';
import { check, dryRunErrors, flag, int64, listOptions, path, type ListOptions } from './query.js';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Delete an object that cannot be read (corrupt) by removing it from storage, unsafely. */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

const POLICIES: readonly string[] = ['Foreground', 'Background', 'Orphan'];

/** DeleteOptions as read from the query or the body, before validation. */
interface RawDelete {
  dryRun: string[];
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

function deleteFromQuery(params: URLSearchParams): RawDelete {
  const raw: RawDelete = { dryRun: params.getAll('dryRun') };
  const grace = int64(params, 'gracePeriodSeconds');
  if (grace !== undefined) raw.gracePeriodSeconds = grace;
  const policy = params.get('propagationPolicy');
  if (policy !== null) raw.propagationPolicy = policy;
  const orphan = flag(params, 'orphanDependents');
  if (orphan !== undefined) raw.orphanDependents = orphan;
  const unsafe = flag(params, 'ignoreStoreReadErrorWithClusterBreakingPotential');
  if (unsafe !== undefined) raw.ignoreStoreReadErrorWithClusterBreakingPotential = unsafe;
  return raw;
}

/** How Go's encoding/json names a JSON value in "cannot unmarshal" errors. */
function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return `number ${v}`;
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

const cannotUnmarshal = (v: unknown, field: string, goType: string): ApiError => badRequest(`json: cannot unmarshal ${goKind(v)} into Go struct field DeleteOptions.${field} of type ${goType}`);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalString(obj: Record<string, unknown>, key: string, field: string, goType = 'string'): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw cannotUnmarshal(v, field, goType);
  return v;
}

/** A DeleteOptions body (JSON or YAML, already decoded), checked field by field as Go's typed decoding would. */
function deleteFromBody(body: unknown): RawDelete {
  if (body === null) return { dryRun: [] };
  if (!isRecord(body)) throw badRequest(`json: cannot unmarshal ${goKind(body)} into Go value of type v1.DeleteOptions`);
  // Kubernetes accepts meta.k8s.io/v1 and the older per-group DeleteOptions; any other kind is refused.
  const kind = optionalString(body, 'kind', 'kind');
  if (kind !== undefined && kind !== '' && kind !== 'DeleteOptions') throw badRequest('decoded object cannot be converted to DeleteOptions');
  const raw: RawDelete = { dryRun: [] };
  const grace = body.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isSafeInteger(grace)) throw cannotUnmarshal(grace, 'gracePeriodSeconds', 'int64');
    raw.gracePeriodSeconds = grace;
  }
  const policy = optionalString(body, 'propagationPolicy', 'propagationPolicy', 'v1.DeletionPropagation');
  if (policy !== undefined) raw.propagationPolicy = policy;
  const orphan = body.orphanDependents;
  if (orphan !== undefined && orphan !== null) {
    if (typeof orphan !== 'boolean') throw cannotUnmarshal(orphan, 'orphanDependents', 'bool');
    raw.orphanDependents = orphan;
  }
  const dryRun = body.dryRun;
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun)) throw cannotUnmarshal(dryRun, 'dryRun', '[]string');
    for (const v of dryRun) if (typeof v !== 'string') throw cannotUnmarshal(v, 'dryRun', 'string');
    raw.dryRun = dryRun as string[];
  }
  const unsafe = body.ignoreStoreReadErrorWithClusterBreakingPotential;
  if (unsafe !== undefined && unsafe !== null) {
    if (typeof unsafe !== 'boolean') throw cannotUnmarshal(unsafe, 'ignoreStoreReadErrorWithClusterBreakingPotential', 'bool');
    raw.ignoreStoreReadErrorWithClusterBreakingPotential = unsafe;
  }
  const pre = body.preconditions;
  if (pre !== undefined && pre !== null) {
    if (!isRecord(pre)) throw cannotUnmarshal(pre, 'preconditions', 'v1.Preconditions');
    const uid = optionalString(pre, 'uid', 'preconditions.uid', 'types.UID');
    const resourceVersion = optionalString(pre, 'resourceVersion', 'preconditions.resourceVersion');
    raw.preconditions = { ...(uid !== undefined ? { uid } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
  }
  return raw;
}

/**
 * ValidateDeleteOptions, and the spec's "non-negative seconds" for gracePeriodSeconds: a negative
 * one is refused (Kubernetes reads it as 1s on the delete path instead; the spec rules, issue 18).
 */
function validateDelete(raw: RawDelete): DeleteOptions {
  const errors: FieldError[] = [];
  if (raw.gracePeriodSeconds !== undefined && raw.gracePeriodSeconds < 0) {
    errors.push(invalidValue(path('gracePeriodSeconds'), raw.gracePeriodSeconds, 'must be greater than or equal to 0'));
  }
  const p = path('propagationPolicy');
  if (raw.orphanDependents !== undefined && raw.propagationPolicy !== undefined) {
    errors.push(invalidValue(p, raw.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (raw.propagationPolicy !== undefined && !POLICIES.includes(raw.propagationPolicy)) errors.push(notSupported(p, raw.propagationPolicy, [...POLICIES, 'nil']));
  errors.push(...dryRunErrors(raw.dryRun));
  if (raw.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // An unsafe delete removes the stored data and nothing else: no option of a normal delete applies.
    const u = path('ignoreStoreReadErrorWithClusterBreakingPotential');
    if (raw.dryRun.length > 0) errors.push(invalidValue(u, true, 'cannot be set together with .dryRun'));
    if (raw.propagationPolicy !== undefined) errors.push(invalidValue(u, true, 'cannot be set together with .propagationPolicy'));
    if (raw.orphanDependents !== undefined) errors.push(invalidValue(u, true, 'cannot be set together with .orphanDependents'));
    if (raw.gracePeriodSeconds !== undefined) errors.push(invalidValue(u, true, 'cannot be set together with .gracePeriodSeconds'));
    if (raw.preconditions !== undefined) errors.push(invalidValue(u, true, 'cannot be set together with .preconditions'));
  }
  check('DeleteOptions', errors);
  const opts: DeleteOptions = { dryRun: raw.dryRun.length > 0 };
  if (raw.gracePeriodSeconds !== undefined) opts.gracePeriodSeconds = raw.gracePeriodSeconds;
  if (raw.propagationPolicy !== undefined) opts.propagationPolicy = raw.propagationPolicy as PropagationPolicy;
  if (raw.orphanDependents !== undefined) opts.orphanDependents = raw.orphanDependents;
  if (raw.preconditions !== undefined) opts.preconditions = raw.preconditions;
  if (raw.ignoreStoreReadErrorWithClusterBreakingPotential === true) opts.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  return opts;
}

/**
 * A DELETE's options. Kubernetes reads them from the body when there is one and then ignores the
 * query entirely (kubectl sends `{"propagationPolicy":"Background"}` and puts dryRun and the grace
 * period in that body too); only a body-less DELETE (python, @kubernetes/client-node) reads the
 * query. `body` is the decoded body, undefined when there was none.
 * ignoreStoreReadErrorWithClusterBreakingPotential is honoured (AllowUnsafeMalformedObjectDeletion on):
 * a DELETE of an object that cannot be read removes it from storage (issue 8, encryption at rest).
 */
export function deleteOptionsFrom(query: URLSearchParams, body: unknown): DeleteOptions {
  return validateDelete(body === undefined ? deleteFromQuery(query) : deleteFromBody(body));
}

/** DELETE of a collection: which objects (a list, never a watch) and how each is deleted. */
export function deleteCollectionOptions(query: URLSearchParams, body: unknown): { list: ListOptions; delete: DeleteOptions } {
  const list = listOptions(withoutWatch(query));
  return { list, delete: deleteOptionsFrom(query, body) };
}

function withoutWatch(query: URLSearchParams): URLSearchParams {
  if (!query.has('watch')) return query;
  const copy = new URLSearchParams(query);
  copy.delete('watch');
  return copy;
}
