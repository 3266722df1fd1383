/**
 * Who is writing and where warnings go, for the writes of one HTTP request. The object store's admit
 * hook has no request in hand (a write may come from a handler, a patch retry loop or a controller),
 * so the server runs each request inside this context and admission reads it. Writes outside any
 * request (controllers: garbage collection, namespace cleanup) run as the system user, unwarned.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { UserInfo } from '../auth/user.js';

export interface AdmissionRequestContext {
  user: UserInfo;
  /** Adds Warning headers to the response (Warn validation actions). */
  warn(messages: readonly string[]): void;
}

const storage = new AsyncLocalStorage<AdmissionRequestContext>();

export const runWithAdmissionContext = <T>(ctx: AdmissionRequestContext, fn: () => T): T => storage.run(ctx, fn);

/** Controllers inside orchd act as Kubernetes' loopback client does. */
const SYSTEM: AdmissionRequestContext = { user: { username: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} }, warn() {} };

export const currentAdmissionContext = (): AdmissionRequestContext => storage.getStore() ?? SYSTEM;
