import type { FieldError } from '../resources/field-errors.js';
import type { Qualified } from '../resources/qualified.js';

/**
 * Why the registry refuses a request, in its own terms: src/http/respond/errors.ts turns each code
 * into the Status Kubernetes answers with (NotFound 404, AlreadyExists 409, Conflict 409, Forbidden
 * 403, Invalid 422, BadRequest 400, MethodNotAllowed 405, CorruptObject 500, Internal 500, Unavailable 503 with Retry-After).
 */
export type RegistryErrorCode = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Forbidden' | 'Invalid' | 'BadRequest' | 'MethodNotAllowed' | 'CorruptObject' | 'Internal' | 'Unavailable';

export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    /** The object refused; for BadRequest and Internal, only what the message says counts. */
    readonly target: Qualified,
    /** Conflict, Forbidden: why; BadRequest, Internal: the message; CorruptObject: why it cannot be read. */
    message: string,
    readonly extra: { fieldErrors?: FieldError[]; key?: string; seq?: number } = {},
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

const NONE: Qualified = { group: '', resource: '' };

export const notFound = (target: Qualified): RegistryError => new RegistryError('NotFound', target, 'not found');
export const alreadyExists = (target: Qualified): RegistryError => new RegistryError('AlreadyExists', target, 'already exists');
export const conflict = (target: Qualified, why: string): RegistryError => new RegistryError('Conflict', target, why);
export const forbidden = (target: Qualified, why: string): RegistryError => new RegistryError('Forbidden', target, why);
export const invalid = (target: Qualified, fieldErrors: FieldError[]): RegistryError => new RegistryError('Invalid', target, 'invalid', { fieldErrors });
export const badRequest = (message: string): RegistryError => new RegistryError('BadRequest', NONE, message);
/** The verb is not allowed on this resource now (a create of a kind whose CRD is being deleted). */
export const methodNotAllowed = (message: string): RegistryError => new RegistryError('MethodNotAllowed', NONE, message);
export const internal = (message: string): RegistryError => new RegistryError('Internal', NONE, message);
/** Storage cannot be reached (a log shared on etcd): the write may or may not have happened; retry. */
export const unavailable = (message: string): RegistryError => new RegistryError('Unavailable', NONE, message);
/** A stored object no provider can read (encryption at rest), met by a get, update or delete. */
export const corruptObject = (key: string, seq: number, why: string): RegistryError => new RegistryError('CorruptObject', NONE, why, { key, seq });

/** Whether err is the registry's refusal with one of these codes (controllers tolerate some). */
export const isRegistryError = (err: unknown, ...codes: RegistryErrorCode[]): err is RegistryError =>
  err instanceof RegistryError && codes.includes(err.code);
