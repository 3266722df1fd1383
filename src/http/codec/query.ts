/**
 * Query parameters, parsed and validated per operation as kube-apiserver does it: values that do
 * not parse are a 400 BadRequest (Kubernetes' ParameterCodec), then the options are validated as a
 * whole into one 422 Invalid naming each field (ValidateListOptions, ValidateCreateOptions,
 * ValidatePatchOptions, ValidateDeleteOptions), all before anything else is done with the request.
 *
 * Selectors are carried as strings; their grammars are parsed where they are used.
 */
import { FieldPath, forbidden, formatFieldError, invalid as invalidValue, notSupported, required, tooLong, type FieldError } from '../../api/field-errors.js';
import { APPLY_PATCH } from './body.js';
import { badRequest, invalid, type ApiError } from '../respond/status.js';
import type { IncludeObject } from '../respond/table.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';
export type ResourceVersionMatch = 'NotOlderThan' | 'Exact';

export interface GetOptions {
  resourceVersion?: string;
  /** An orchd extension: Kubernetes' GetOptions has no match, orchd reads an object at a version with Exact. */
  resourceVersionMatch?: ResourceVersionMatch;
}

export interface ListOptions {
  watch: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  /** Unset when absent or not positive (Kubernetes: no limit). */
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks: boolean;
  /** Always false for a list; for a watch, the default described at listOptions. */
  sendInitialEvents: boolean;
}

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: FieldValidation;
}

export interface PatchOptions extends WriteOptions {
  force: boolean;
}

/** The Kubernetes option kinds in 422 answers: `ListOptions "" is invalid: …`. */
type OptionsKind = 'GetOptions' | 'ListOptions' | 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

export function check(kind: OptionsKind, errors: FieldError[]): void {
  if (errors.length > 0) throw invalid({ group: 'meta.k8s.io', resource: kind, kind }, errors);
}

export const path = (name: string): FieldPath => FieldPath.root(name);

/**
 * A boolean query parameter as kube-apiserver reads it (runtime.Convert_Slice_string_To_bool):
 * absent → undefined; `0` or any casing of `false` → false; anything else, the empty value of a
 * bare `?watch` included, → true. This is looser than Go's strconv.ParseBool on purpose: python
 * sends `True`, people type `?watch` or `?watch=1`, and Kubernetes never answers 400 for these.
 */
export function flag(params: URLSearchParams, name: string): boolean | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** Go's strconv.ParseBool: `1 t T TRUE true True` and `0 f F FALSE false False`, otherwise undefined. */
export function parseGoBool(v: string): boolean | undefined {
  switch (v) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An int64 parameter as Go's strconv.ParseInt(v, 10, 64) reads it; junk is a 400 naming the parameter. */
export function int64(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) throw badRequest(`${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const big = BigInt(v);
  if (big < INT64_MIN || big > INT64_MAX) throw badRequest(`${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(big);
}

/** A string parameter; empty counts as unset, as Kubernetes treats it. */
function text(params: URLSearchParams, name: string): string | undefined {
  const v = params.get(name);
  return v === null || v === '' ? undefined : v;
}

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * A resourceVersion as a log sequence. Kubernetes' versioner reads it with strconv.ParseUint and
 * answers 400 for anything else; "" and "0" are 0 (any version).
 */
export function parseResourceVersion(rv: string | undefined): number {
  if (rv === undefined || rv === '' || rv === '0') return 0;
  const bad = (why: string): ApiError => badRequest(`invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`);
  if (!/^[0-9]+$/.test(rv)) throw bad('invalid syntax');
  if (BigInt(rv) > UINT64_MAX) throw bad('value out of range');
  return Number(rv);
}

/**
 * pretty as Kubernetes decides it: a non-empty `pretty` is read with strconv.ParseBool (junk is
 * false, not an error); without one, answers are pretty for curl, Wget and browsers.
 */
export function pretty(params: URLSearchParams, userAgent: string | undefined): boolean {
  const v = params.get('pretty');
  if (v) return parseGoBool(v) ?? false;
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

const INCLUDE_OBJECT: readonly string[] = ['None', 'Metadata', 'Object'];

/** What Table rows carry; unset is Metadata. Only read when a Table is asked for, as Kubernetes does. */
export function includeObject(params: URLSearchParams): IncludeObject {
  const v = params.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (INCLUDE_OBJECT.includes(v)) return v as IncludeObject;
  const err = invalidValue(path('includeObject'), v, "must be 'Metadata', 'Object', 'None', or empty");
  throw badRequest(`Unable to convert to Table as requested: ${formatFieldError(err)}`);
}

const MATCHES: readonly string[] = ['Exact', 'NotOlderThan'];

/** resourceVersionMatch rules shared by get and list (ValidateListOptions, not watching). */
function matchErrors(match: string | undefined, rv: string | undefined, cont: string | undefined): FieldError[] {
  if (match === undefined) return [];
  const p = path('resourceVersionMatch');
  const errors: FieldError[] = [];
  if (rv === undefined) errors.push(forbidden(p, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  if (cont !== undefined) errors.push(forbidden(p, 'resourceVersionMatch is forbidden when continue is provided'));
  if (!MATCHES.includes(match)) errors.push(notSupported(p, match, [...MATCHES, '']));
  if (match === 'Exact' && rv === '0') errors.push(forbidden(p, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  return errors;
}

/** Options of a GET of one object. */
export function getOptions(params: URLSearchParams): GetOptions {
  const resourceVersion = text(params, 'resourceVersion');
  const match = text(params, 'resourceVersionMatch');
  check('GetOptions', matchErrors(match, resourceVersion, undefined));
  parseResourceVersion(resourceVersion);
  return { ...(resourceVersion !== undefined ? { resourceVersion } : {}), ...(match !== undefined ? { resourceVersionMatch: match as ResourceVersionMatch } : {}) };
}

/**
 * Options of a list or a watch (`watch: true` forces a watch, for the deprecated /watch/ paths).
 *
 * sendInitialEvents, as read here: the spec's rules (usable only with watch; requires
 * resourceVersionMatch=NotOlderThan, anything else Invalid) are Kubernetes' validateWatchOptions.
 * Its default ("true when resourceVersion is empty or 0, otherwise false") is Kubernetes'
 * SetListOptionsDefaults with the WatchList feature on, as it is by default since 1.34: it applies
 * only to a watch that sets neither sendInitialEvents nor resourceVersionMatch, and then fills in
 * both (true, NotOlderThan), so the requirement above holds for the defaulted request too. An
 * explicit resourceVersionMatch without sendInitialEvents is not defaulted but Invalid. A watch
 * from a non-zero resourceVersion, as kubectl and the client libraries send, stays a plain watch.
 */
export function listOptions(params: URLSearchParams, force: { watch?: boolean } = {}): ListOptions {
  const watch = force.watch === true || flag(params, 'watch') === true;
  const resourceVersion = text(params, 'resourceVersion');
  let match = text(params, 'resourceVersionMatch');
  const cont = text(params, 'continue');
  let initial = flag(params, 'sendInitialEvents');
  const limit = int64(params, 'limit');
  const timeoutSeconds = int64(params, 'timeoutSeconds');
  // Kubernetes would start a watch that times out at once; no client means that, so say so instead.
  if (timeoutSeconds !== undefined && timeoutSeconds < 0) throw badRequest('timeoutSeconds: must be greater than or equal to 0');

  const errors: FieldError[] = [];
  if (!watch) {
    errors.push(...matchErrors(match, resourceVersion, cont));
    if (initial !== undefined) errors.push(forbidden(path('sendInitialEvents'), 'sendInitialEvents is forbidden for list'));
  } else {
    // Not with continue, which is refused below as itself rather than as the match it would default.
    if (initial === undefined && match === undefined && cont === undefined && (resourceVersion === undefined || resourceVersion === '0')) {
      initial = true;
      match = 'NotOlderThan';
    }
    const p = path('resourceVersionMatch');
    if (initial !== undefined && match !== 'NotOlderThan') errors.push(forbidden(p, 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (match !== undefined) {
      if (initial === undefined) errors.push(forbidden(p, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') errors.push(notSupported(p, match, ['NotOlderThan']));
      if (cont !== undefined) errors.push(forbidden(p, 'resourceVersionMatch is forbidden when continue is provided'));
    }
  }
  check('ListOptions', errors);
  // The spec: continue is "unsupported with watch"; a watch has no pages to continue (issue 18).
  if (watch && cont !== undefined) check('ListOptions', [forbidden(path('continue'), 'continue is forbidden for watch')]);
  // Then what Kubernetes' storage layer rejects.
  if (!watch && cont !== undefined && resourceVersion !== undefined && resourceVersion !== '0') {
    throw badRequest('specifying resource version is not allowed when using continue');
  }
  parseResourceVersion(resourceVersion);

  const opts: ListOptions = { watch, allowWatchBookmarks: flag(params, 'allowWatchBookmarks') === true, sendInitialEvents: initial === true };
  for (const name of ['labelSelector', 'fieldSelector', 'shardSelector'] as const) {
    const v = text(params, name);
    if (v !== undefined) opts[name] = v;
  }
  if (resourceVersion !== undefined) opts.resourceVersion = resourceVersion;
  if (match !== undefined) opts.resourceVersionMatch = match as ResourceVersionMatch;
  if (limit !== undefined && limit > 0) opts.limit = limit;
  if (cont !== undefined) opts.continue = cont;
  if (timeoutSeconds !== undefined) opts.timeoutSeconds = timeoutSeconds;
  return opts;
}

/** Kubernetes' FieldManagerMaxLength, in bytes (the spec's "fewer than 128 characters" paraphrases it). */
const FIELD_MANAGER_MAX_BYTES = 128;
/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function fieldManagerErrors(manager: string): FieldError[] {
  const p = path('fieldManager');
  const errors: FieldError[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_BYTES) errors.push(tooLong(p, undefined, FIELD_MANAGER_MAX_BYTES));
  let at = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errors.push(invalidValue(p, manager, `invalid character U+${code} (at position ${at})`));
    }
    at += Buffer.byteLength(ch);
  }
  return errors;
}

export function dryRunErrors(values: readonly string[]): FieldError[] {
  return values.every((v) => v === 'All') ? [] : [notSupported(path('dryRun'), values, ['All'])];
}

const FIELD_VALIDATIONS: readonly string[] = ['Ignore', 'Strict', 'Warn'];

/** The options every write shares (CreateOptions, UpdateOptions, PatchOptions) and their errors. */
function writeOptions(params: URLSearchParams, errors: FieldError[]): WriteOptions {
  const dryRun = params.getAll('dryRun');
  const fieldManager = text(params, 'fieldManager');
  const validation = params.get('fieldValidation') ?? '';
  if (fieldManager !== undefined) errors.push(...fieldManagerErrors(fieldManager));
  errors.push(...dryRunErrors(dryRun));
  if (validation !== '' && !FIELD_VALIDATIONS.includes(validation)) errors.push(notSupported(path('fieldValidation'), validation, ['', ...FIELD_VALIDATIONS]));
  // Unset is Warn, the default since 1.23.
  return { dryRun: dryRun.length > 0, ...(fieldManager !== undefined ? { fieldManager } : {}), fieldValidation: (validation || 'Warn') as FieldValidation };
}

function plainWriteOptions(kind: 'CreateOptions' | 'UpdateOptions'): (params: URLSearchParams) => WriteOptions {
  return (params) => {
    const errors: FieldError[] = [];
    const opts = writeOptions(params, errors);
    check(kind, errors);
    return opts;
  };
}

export const createOptions = plainWriteOptions('CreateOptions');
export const updateOptions = plainWriteOptions('UpdateOptions');

/** Whether a PATCH's media type is server-side apply. */
export const isApplyPatch = (patchType: string): boolean => patchType === APPLY_PATCH;

/**
 * Options of a PATCH of the given media type: an apply patch needs a fieldManager; any other patch
 * may not carry force at all (`force=false` included, as in Kubernetes).
 */
export function patchOptions(params: URLSearchParams, patchType: string): PatchOptions {
  const errors: FieldError[] = [];
  const force = flag(params, 'force');
  const manager = text(params, 'fieldManager');
  if (isApplyPatch(patchType)) {
    if (manager === undefined) errors.push(required(path('fieldManager'), 'is required for apply patch'));
  } else if (force !== undefined) {
    errors.push(forbidden(path('force'), 'may not be specified for non-apply patch'));
  }
  const opts = writeOptions(params, errors);
  check('PatchOptions', errors);
  return { ...opts, force: force === true };
}
