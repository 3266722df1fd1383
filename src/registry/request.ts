/**
 * The request's attributes as the door sees them: who writes, and where the write's warnings and
 * audit annotations go. A write may start in a handler, a patch's retry loop or a controller, with no
 * request in hand; the server runs each request inside its attributes (asRequest) and the write path
 * (admission) reads them. Controllers' work runs as the system user (asSystem).
 */
import { runAsSystem, runWithAdmissionContext, type AdmissionRequestContext } from '../admission/request-context.js';

export type RequestAttributes = AdmissionRequestContext;

export const asRequest = <T>(attributes: RequestAttributes, fn: () => T): T => runWithAdmissionContext(attributes, fn);

/**
 * Runs a controller's work as the system user, as Kubernetes' loopback client does. Needed wherever
 * work is started from the change stream: a commit is delivered in the async context of whichever
 * request's write began the batch, and that request's user must not be taken for the controller's.
 */
export const asSystem = <T>(fn: () => T): T => runAsSystem(fn);
