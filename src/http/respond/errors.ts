/**
 * The one error table: every room throws its own coded error (the registry's, admission's, patch's,
 * the log's, the store's, the watch engine's) and this is the only place any of them becomes a
 * `kind: Status`. A row is a class and a code; the first row whose class and code match the thrown
 * value words it. The rooms behind the registry are reached through it (src/registry/errors.ts).
 * Errors src/http raises itself are ApiErrors that already know their Status.
 */
import { AdmissionError, conflictMessage, describeManager, PatchError, CorruptEntryError, LogError, qualifiedOfKey, RegistryError, StoreError, WatchError } from '../../registry/errors.js';
import * as E from './status.js';

// Rows are matched by class at run time; `any` lets each row's word function take its own class.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type ErrorClass<T> = abstract new (...args: any[]) => T;

interface Row<T extends Error> {
  error: ErrorClass<T>;
  /** The error's code this row words; undefined: every error of the class. */
  code?: string;
  word(err: T): E.ApiError;
}

const row = <T extends Error>(error: ErrorClass<T>, code: string | undefined, word: (err: T) => E.ApiError): Row<Error> => ({ error, code, word }) as Row<Error>;

function failure(code: number, reason: string, message: string, details?: E.Status['details']): E.ApiError {
  return new E.ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

/** A policy's refusal: the Forbidden answer about the object, with the policy's reason, code and causes. */
function denial(err: AdmissionError, message?: string): E.ApiError {
  const base = E.forbidden(err.info.target ?? { group: '', resource: '' }, err.message).status;
  return new E.ApiError({
    ...base,
    ...(message !== undefined ? { message } : {}),
    ...(err.info.reason !== undefined ? { reason: err.info.reason } : {}),
    ...(err.info.status !== undefined ? { code: err.info.status } : {}),
    details: { ...base.details, ...(err.info.causes ? { causes: err.info.causes } : {}) },
  });
}

const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** A version newer than storage has, as storage words it (no current version to name). */
const tooLarge = (message: string): E.ApiError => failure(504, 'Timeout', `Timeout: ${message}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] });

export const ROWS: readonly Row<Error>[] = [
  row(E.ApiError, undefined, (e) => e),
  row(RegistryError, 'NotFound', (e) => E.notFound(e.target)),
  row(RegistryError, 'AlreadyExists', (e) => E.alreadyExists(e.target)),
  row(RegistryError, 'Conflict', (e) => E.conflict(e.target, e.message)),
  row(RegistryError, 'Forbidden', (e) => E.forbidden(e.target, e.message)),
  row(RegistryError, 'Invalid', (e) => E.invalid(e.target, e.extra.fieldErrors ?? [])),
  row(RegistryError, 'BadRequest', (e) => E.badRequest(e.message)),
  row(RegistryError, 'MethodNotAllowed', (e) => E.notAllowedNow(e.message)),
  row(RegistryError, 'CorruptObject', (e) => E.corruptObject(e.extra.key ?? '', e.extra.seq ?? 0, e.message)),
  row(RegistryError, 'Internal', (e) => E.internalError(e.message)),
  row(RegistryError, 'Unavailable', (e) => E.serviceUnavailable(e.message, 1)),
  // A version below the compaction horizon; a list's continue carries a token that goes on from now.
  row(RegistryError, 'Expired', (e) => E.resourceExpired(e.message, e.extra.continue)),
  row(RegistryError, 'TooLargeResourceVersion', (e) => E.tooLargeResourceVersion(e.extra.seq ?? 0, e.extra.current ?? 0, e.extra.retryAfterSeconds ?? 0)),
  row(RegistryError, 'StorageReadError', (e) =>
    E.storeReadError(
      e.target,
      e.extra.key ?? '',
      (e.extra.failures ?? []).map((f) => ({ key: f.key, message: E.corruptObjectMessage(f.key, f.seq, f.why) })),
    ),
  ),
  row(AdmissionError, 'Forbidden', (e) => denial(e)),
  // The first failure's message as it is, not the Forbidden wording around it.
  row(AdmissionError, 'PolicyDenied', (e) => denial(e, e.message)),
  row(
    AdmissionError,
    'WebhookDenied',
    (e) =>
      new E.ApiError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: e.message,
        ...(e.info.reason ? { reason: e.info.reason } : {}),
        ...(e.info.details ? { details: e.info.details as E.Status['details'] } : {}),
        code: e.info.status ?? 400,
      }),
  ),
  row(AdmissionError, 'BadRequest', (e) => E.badRequest(e.message)),
  row(AdmissionError, 'Internal', (e) => E.internalError(e.message)),
  row(PatchError, 'BadPatch', (e) => E.badRequest(e.message)),
  row(PatchError, 'TooLarge', (e) => failure(413, 'RequestEntityTooLarge', `Request entity too large: ${e.message}`, {})),
  row(PatchError, 'Conflict', (e) =>
    failure(409, 'Conflict', conflictMessage(e.conflicts), {
      causes: e.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c.manager)}`, field: c.path })),
    }),
  ),
  // Kubernetes answers a patch it cannot apply with a bare "rejected our request"; the reason is added here.
  row(PatchError, 'Unprocessable', (e) => failure(422, 'Invalid', `the server rejected our request due to an error in our request: ${e.message}`, {})),
  row(CorruptEntryError, undefined, (e) => E.corruptObject(e.key, e.seq, e.why)),
  // The store's own errors, as a write or read the registry did not word meets them: about their key.
  row(StoreError, 'KEY_EXISTS', (e) => E.alreadyExists(qualifiedOfKey(e.key))),
  row(StoreError, 'NOT_FOUND', (e) => E.notFound(qualifiedOfKey(e.key))),
  row(StoreError, 'CONFLICT', (e) => E.conflict(qualifiedOfKey(e.key), MODIFIED)),
  row(StoreError, 'TOO_MANY_RETRIES', (e) => E.conflict(qualifiedOfKey(e.key), MODIFIED)),
  row(StoreError, 'COMPACTED', (e) => E.gone(`too old resource version: ${e.seq ?? 0}`)),
  row(StoreError, 'FUTURE_SEQ', (e) => tooLarge(e.message)),
  // The log's: a log shared by replicas (etcd) that cannot be reached (the write may have happened),
  // or other replicas that kept writing first.
  row(LogError, 'UNAVAILABLE', (e) => E.serviceUnavailable(`storage is unavailable: ${e.message}`, 1)),
  row(LogError, 'CONFLICT', () => failure(409, 'Conflict', `Operation cannot be fulfilled: ${MODIFIED}`, {})),
  row(LogError, 'CLOSED', (e) => E.serviceUnavailable(`storage is closed: ${e.message}`, 1)),
  row(LogError, 'COMPACTED', (e) => E.gone(`too old resource version: ${e.seq ?? 0}`)),
  row(LogError, 'FUTURE_SEQ', (e) => tooLarge(e.message)),
  row(WatchError, 'COMPACTED', (e) => E.gone(`too old resource version: ${e.seq ?? 0} (${e.current})`)),
  row(WatchError, 'TOO_LARGE_VERSION', (e) => E.tooLargeResourceVersion(e.seq ?? 0, e.current)),
  // Kubernetes ends a watcher that cannot keep up; the InternalError makes client-go watch again
  // from the last version it received, which the Status also carries.
  row(WatchError, 'STALLED', (e) => {
    const err = E.internalError(`watch closed: ${e.message}`);
    if (e.seq !== undefined) err.status.metadata = { resourceVersion: String(e.seq) };
    return err;
  }),
];

/** Any thrown value as an ApiError; what no row words (a bug, a backend failure) is a 500 that does not leak internals. */
export function toApiError(err: unknown): E.ApiError {
  for (const r of ROWS) {
    if (err instanceof r.error && (r.code === undefined || (err as Error & { code?: unknown }).code === r.code)) return r.word(err);
  }
  return E.internalError(err instanceof Error ? err.message : String(err));
}

/** Any thrown value as the Status it is answered with. */
export const toStatus = (err: unknown): E.Status => toApiError(err).status;
