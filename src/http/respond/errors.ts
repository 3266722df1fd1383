/**
 * The one error table: every room throws its own coded error (the registry's, admission's, patch's,
 * the log's, the store's) and this is the only place any of them becomes a `kind: Status`. A row
 * is a class and a code; the first row whose class and code match the thrown value words it.
 * Errors src/http raises itself are ApiErrors that already know their Status.
 */
import { AdmissionError } from '../../admission/errors.js';
import { CorruptEntryError } from '../../log/encryption/index.js';
import { conflictMessage, describeManager } from '../../patch/managed-fields.js';
import { PatchError } from '../../patch/errors.js';
import { RegistryError } from '../../registry/errors.js';
import { WatchError } from '../../store/watch.js';
import * as E from './status.js';

// Rows are matched by class at run time; `any` lets each row's word function take its own class.
type ErrorClass<T> = abstract new (...args: any[]) => T;

interface Row<T extends Error> {
  error: ErrorClass<T>;
  /** The error's code this row words; undefined: every error of the class. */
  code?: string;
  word(err: T): E.ApiError;
}

const row = <T extends Error>(error: ErrorClass<T>, code: string | undefined, word: (err: T) => E.ApiError): Row<Error> =>
  ({ error, code, word }) as Row<Error>;

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
  row(AdmissionError, 'Forbidden', (e) => denial(e)),
  // The first failure's message as it is, not the Forbidden wording around it.
  row(AdmissionError, 'PolicyDenied', (e) => denial(e, e.message)),
  row(AdmissionError, 'WebhookDenied', (e) =>
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
