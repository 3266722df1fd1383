import type { FieldError } from '../api/field-errors.js';
import type { Qualified } from '../api/qualified.js';
import { splitKey } from '../api/object-keys.js';

/**
 * The errors of the rooms behind the door, passed on as they are: the one error table
 * (src/http/respond/errors.ts) has a row for each, and reaches them here, not past the registry.
 */
export { AdmissionError } from '../admission/errors.js';
export { CorruptEntryError } from '../log/encryption/index.js';
export { LogError } from '../log/log.js';
export { StoreError } from '../store/errors.js';
export { WatchError } from '../store/watch.js';
export { PatchError } from '../patch/errors.js';
/** How a field-manager conflict is worded, for the patch room's Conflict error. */
export { conflictMessage, describeManager } from '../patch/managed-fields.js';

/**
 * Why the registry refuses a request, in its own terms: src/http/respond/errors.ts turns each code
 * into the Status Kubernetes answers with (NotFound 404, AlreadyExists 409, Conflict 409, Forbidden
 * 403, Invalid 422, BadRequest 400, MethodNotAllowed 405, CorruptObject 500, Internal 500, Unavailable 503 with Retry-After,
 * Expired 410, TooLargeResourceVersion 504, StorageReadError 500).
 */
export type RegistryErrorCode =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Forbidden'
  | 'Invalid'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'CorruptObject'
  | 'Internal'
  | 'Unavailable'
  | 'Expired'
  | 'TooLargeResourceVersion'
  | 'StorageReadError';

export interface RegistryErrorExtra {
  fieldErrors?: FieldError[];
  key?: string;
  seq?: number;
  /** TooLargeResourceVersion: the newest version applied. */
  current?: number;
  /** TooLargeResourceVersion: when to try again (0: not said, the version was not waited for). */
  retryAfterSeconds?: number;
  /** Expired continue: a token that goes on from the current state. */
  continue?: string;
  /** StorageReadError: each object that cannot be read: its key, version and why. */
  failures?: { key: string; seq: number; why: string }[];
}

export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    /** The object refused; for BadRequest and Internal, only what the message says counts. */
    readonly target: Qualified,
    /** Conflict, Forbidden: why; BadRequest, Internal: the message; CorruptObject: why it cannot be read. */
    message: string,
    readonly extra: RegistryErrorExtra = {},
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
/** A version below the compaction horizon; a list's continue past it carries a token that goes on from now. */
export const expired = (message: string, continueToken?: string): RegistryError => new RegistryError('Expired', NONE, message, continueToken !== undefined ? { continue: continueToken } : {});
/** A version newer than any applied: at once (retryAfterSeconds 0) or after waiting for it. */
export const tooLargeResourceVersion = (seq: number, current: number, retryAfterSeconds: number): RegistryError =>
  new RegistryError('TooLargeResourceVersion', NONE, `Too large resource version: ${seq}, current: ${current}`, { seq, current, retryAfterSeconds });
/** A list over objects that cannot be read (Kubernetes' StorageReadError), each named by its key. */
export const storageReadError = (target: Qualified, prefix: string, failures: { key: string; seq: number; why: string }[]): RegistryError =>
  new RegistryError('StorageReadError', target, `failed to read one or more objects under ${prefix}`, { key: prefix, failures });

/** Whether err is the registry's refusal with one of these codes (controllers tolerate some). */
export const isRegistryError = (err: unknown, ...codes: RegistryErrorCode[]): err is RegistryError => err instanceof RegistryError && codes.includes(err.code);

/** What an error about a storage key names: the key's group, resource and name (Kubernetes words storage errors so). */
export function qualifiedOfKey(key: string): Qualified {
  const { collection, suffix } = splitKey(key);
  const slash = collection.indexOf('/');
  return { group: collection.slice(0, slash), resource: collection.slice(slash + 1), name: suffix.slice(suffix.indexOf('/') + 1) };
}
