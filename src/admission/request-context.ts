/**
 * Who is writing, and where warnings and audit annotations go, for the writes of one HTTP request.
 * The object store's admit hook has no request in hand (a write may come from a handler, a patch
 * retry loop or a controller), so the server runs each request inside this context and admission
 * reads it. Writes outside any request (controllers: garbage collection, namespace cleanup, policy
 * status) run as the system user, unwarned and unaudited.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { UserInfo } from '../config/user-info.js';

export interface AdmissionRequestContext {
  user: UserInfo;
  /** Adds Warning headers to the response (Warn validation actions). */
  warn(messages: readonly string[]): void;
  /**
   * Adds an annotation to the request's audit record. As Kubernetes' admission attributes do, the
   * first value of a key stays: a later, different value for the same key is dropped.
   */
  annotate(key: string, value: string): void;
  /** What the request does, for the log to keep with each entry it writes (absent: the system's own writes). */
  write?: { verb: string; subresource?: string; manager?: string };
}

const storage = new AsyncLocalStorage<AdmissionRequestContext>();

export const runWithAdmissionContext = <T>(ctx: AdmissionRequestContext, fn: () => T): T => storage.run(ctx, fn);

/** Controllers inside orchd act as Kubernetes' loopback client does. */
const SYSTEM: AdmissionRequestContext = {
  user: { username: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} },
  warn() {},
  annotate() {},
};

export const currentAdmissionContext = (): AdmissionRequestContext => storage.getStore() ?? SYSTEM;

/**
 * Runs a controller's work as the system user. Needed wherever work is started from the store's
 * change stream: a commit is delivered in the async context of whichever request's write began the
 * batch, and that request's user must not be taken for the controller's.
 */
export const runAsSystem = <T>(fn: () => T): T => storage.run(SYSTEM, fn);

/**
 * Runs one write with what it does (its verb, subresource, field manager) known to the log: a
 * request's own (the server sets it from the HTTP verb) stays; a controller's write, which has none,
 * gets this one, so the log names the system user's deletes and status updates as it names a
 * client's.
 */
export function runAsWrite<T>(write: NonNullable<AdmissionRequestContext['write']>, fn: () => T): T {
  const ctx = currentAdmissionContext();
  return ctx.write ? fn() : storage.run({ ...ctx, write }, fn);
}

/**
 * Who is writing now, as the log keeps it with each entry (Store writerOf): the request's user, verb,
 * subresource and field manager; a controller's writes are the system user's.
 */
export function currentWriter(): { user: string; verb?: string; subresource?: string; manager?: string } {
  const ctx = currentAdmissionContext();
  return { user: ctx.user.username, ...ctx.write };
}
