import { formatFieldError, type FieldError } from '../../api/field-errors.js';
import type { Qualified } from '../../api/qualified.js';

/** Kubernetes' metav1.Status, the body of every error answer. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; resourceVersion?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
  code: number;
}

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'StorageReadError'
  | 'ServiceUnavailable';

/** An error that already knows its wire form. Thrown anywhere in src/http, rendered at the edge. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
    this.name = 'ApiError';
  }
  get code(): number {
    return this.status.code;
  }
}

const qualifiedResource = (q: Qualified): string => (q.group ? `${q.resource}.${q.group}` : q.resource);

function failure(code: number, reason: StatusReason | undefined, message: string, details?: Status['details']): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  });
}

/**
 * Details of errors about a resource (NotFound, AlreadyExists, Conflict, Forbidden): Kubernetes puts
 * the resource, not the kind, in `kind` (`"kind":"pods"`), and leaves out the core group's "".
 */
const detailsOf = (q: Qualified): Status['details'] => ({
  ...(q.name !== undefined ? { name: q.name } : {}),
  ...(q.group ? { group: q.group } : {}),
  kind: q.resource,
});

export const badRequest = (message: string, causes?: NonNullable<Status['details']>['causes']): ApiError => failure(400, 'BadRequest', message, causes ? { causes } : undefined);
export const notFound = (q: Qualified): ApiError => failure(404, 'NotFound', `${qualifiedResource(q)} "${q.name ?? ''}" not found`, detailsOf(q));
export const pathNotFound = (): ApiError => failure(404, 'NotFound', 'the server could not find the requested resource', {});
export const alreadyExists = (q: Qualified): ApiError => failure(409, 'AlreadyExists', `${qualifiedResource(q)} "${q.name ?? ''}" already exists`, detailsOf(q));
export const conflict = (q: Qualified, why: string): ApiError => failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(q)} "${q.name ?? ''}": ${why}`, detailsOf(q));
export const gone = (message: string): ApiError => failure(410, 'Expired', message);
/** 410 for a continue token past the horizon; carries a fresh token that continues from the latest snapshot. */
export const resourceExpired = (message: string, continueToken?: string): ApiError => {
  const e = failure(410, 'Expired', message);
  if (continueToken) e.status.metadata = { continue: continueToken };
  return e;
};
export const methodNotAllowed = (method: string): ApiError =>
  failure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {
    causes: [{ message: `method ${method} is not allowed` }],
  });
/** A verb the resource serves but refuses now (a create while its CRD is being deleted): 405 with why. */
export const notAllowedNow = (why: string): ApiError => failure(405, 'MethodNotAllowed', why);
export const notAcceptable = (accept: string): ApiError => failure(406, 'NotAcceptable', `the server was unable to respond with a content type that the client supports (${accept})`);
export const unsupportedMediaType = (contentType: string): ApiError =>
  failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got ${contentType || 'none'})`);
/** A request the HTTP parser refuses (raw-requests.ts), with the code node:http would answer bare. */
export const malformedRequest = (code: 400 | 408 | 413 | 431, why: string): ApiError =>
  failure(code, code === 413 ? 'RequestEntityTooLarge' : code === 408 ? 'Timeout' : 'BadRequest', `malformed HTTP request: ${why}`);
export const entityTooLarge = (limit: number): ApiError => failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
/** Kubernetes' storage.NewTooLargeResourceVersionError: a Timeout whose retry hint is left out when 0. */
export const tooLargeResourceVersion = (rv: number, current: number, retryAfterSeconds = 1): ApiError =>
  failure(504, 'Timeout', `Timeout: Too large resource version: ${rv}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
  });
export const internalError = (message: string): ApiError =>
  failure(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
/**
 * An object whose stored data cannot be read (encryption at rest: no provider opens it): Kubernetes'
 * storage.NewCorruptObjError as a GET, PUT, PATCH or DELETE meets it (500 InternalError).
 */
export const corruptObject = (key: string, seq: number, why: string): ApiError => internalError(corruptObjectMessage(key, seq, why));
/** Kubernetes' StorageError text for a corrupt object (code 7). */
export const corruptObjectMessage = (key: string, seq: number, why: string): string =>
  `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=${seq}: ${why}`;
/** Causes a list's StorageReadError names at most (then one TooMany cause), as Kubernetes does. */
const STORE_READ_CAUSES = 100;
/** A list over corrupt objects: 500 StorageReadError naming each unreadable key (Kubernetes' aggregated corrupt-object error). */
export function storeReadError(q: Qualified, prefix: string, failures: { key: string; message: string }[]): ApiError {
  const causes: NonNullable<Status['details']>['causes'] = failures.slice(0, STORE_READ_CAUSES).map((f) => ({ reason: 'UnexpectedServerResponse', message: f.message, field: f.key }));
  if (failures.length > STORE_READ_CAUSES) causes.push({ reason: 'TooMany', message: 'too many errors, the list is truncated' });
  return failure(500, 'StorageReadError', `failed to read one or more ${qualifiedResource(q)} from the storage`, {
    ...(q.group ? { group: q.group } : {}),
    kind: q.resource,
    name: prefix,
    causes,
  });
}
export const forbidden = (q: Qualified, why: string): ApiError => failure(403, 'Forbidden', `${qualifiedResource(q)} "${q.name ?? ''}" is forbidden: ${why}`, detailsOf(q));
/**
 * Kubernetes' NewForbidden for a refused request: `events is forbidden: …` (no name when the
 * request names none), `forbidden: …` for a non-resource request (no resource at all).
 */
export const forbiddenRequest = (group: string, resource: string, name: string, why: string): ApiError => {
  const qualifiedText = group ? `${resource}.${group}` : resource;
  const message = !resource && !group ? `forbidden: ${why}` : name ? `${qualifiedText} "${name}" is forbidden: ${why}` : `${qualifiedText} is forbidden: ${why}`;
  return failure(403, 'Forbidden', message, { ...(name ? { name } : {}), ...(group ? { group } : {}), ...(resource ? { kind: resource } : {}) });
};
export const serviceUnavailable = (message: string, retryAfterSeconds = 0): ApiError => failure(503, 'ServiceUnavailable', message, retryAfterSeconds > 0 ? { retryAfterSeconds } : undefined);
/**
 * kube-apiserver's max-in-flight refusal: its words and `Retry-After: 1`. It sends them as plain
 * text (Go's http.Error); here they are a Status, as every error orchd answers is, which clients
 * read the same way (client-go retries a 429 after Retry-After whatever the body).
 */
export const tooManyRequests = (): ApiError => failure(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
/** A request whose body did not arrive within the request timeout: kube-apiserver's timeout filter's 504. */
export const requestTimeout = (): ApiError => failure(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout', {});
/** Failed authentication: Kubernetes never says why to the client (the reason goes to the log). */
export const unauthorized = (): ApiError => failure(401, 'Unauthorized', 'Unauthorized');

/** 422 Invalid with one cause per field error, worded as Kubernetes words it. */
export function invalid(q: Qualified, errors: FieldError[]): ApiError {
  const list = errors.map(formatFieldError);
  const body = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  // Invalid is about a kind (NewInvalid takes a GroupKind, printed Kind.group, or Kind in the core group).
  const kind = q.kind ?? q.resource;
  return failure(422, 'Invalid', `${q.group ? `${kind}.${q.group}` : kind} "${q.name ?? ''}" is invalid: ${body}`, {
    ...(q.name !== undefined ? { name: q.name } : {}),
    ...(q.group ? { group: q.group } : {}),
    kind: q.kind ?? q.resource,
    causes: errors.map((e) => ({ reason: e.type, message: formatFieldError(e).slice(e.field.length + 2), field: e.field })),
  });
}

/** Success, as a delete answers it; an empty group (the core group) is left out, as Go's omitempty does. */
export const success = (details?: Status['details']): Status => {
  let d = details;
  if (d?.group === '') {
    const { group: _g, ...rest } = d;
    d = rest;
  }
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(d ? { details: d } : {}), code: 200 };
};
