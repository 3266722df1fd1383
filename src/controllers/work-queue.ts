import { auditTime, buffer, catchError, concatMap, connect, defer, EMPTY, ignoreElements, mergeMap } from 'rxjs';
import type { MonoTypeOperatorFunction, Observable, Subscription } from 'rxjs';
import { asSystem } from '../registry/request.js';
import type { Logger } from '../observability/logger.js';

/**
 * One run of a controller's work, as an Observable that completes when it is done: as the system
 * user, because the work is triggered from the store's change stream, which runs in the async
 * context of whichever request's write began the batch, and that user is not the controller; a
 * failure is logged under the controller's name and ends this run only.
 */
export function systemJob(name: string, log: Logger, work: () => Promise<void>): Observable<never> {
  return defer(() => asSystem(work)).pipe(
    ignoreElements(),
    catchError((err: unknown) => {
      log.warn(name, { error: String(err) });
      return EMPTY;
    }),
  );
}

/**
 * A controller's reconcile loop: work(item) for each item of triggers, one at a time in the order
 * they come (concatMap), as Kubernetes' controllers take keys from their work queue. Unsubscribing
 * stops the controller: the run under way finishes, those waiting are dropped.
 */
export function runSerially<T>(name: string, log: Logger, triggers: Observable<T>, work: (item: T) => Promise<void>): Subscription {
  return triggers.pipe(concatMap((item) => systemJob(name, log, () => work(item)))).subscribe();
}

/** How long a controller gathers changes before it acts on them. */
export const COALESCE_MS = 10;

/**
 * Items that arrive within `ms` of one another, each once (in the order first seen): a burst of
 * writes to one object is reconciled once, as a work queue holds a key once however often it is added.
 */
export function coalesce<T>(ms = COALESCE_MS): MonoTypeOperatorFunction<T> {
  return connect((items) =>
    items.pipe(
      buffer(items.pipe(auditTime(ms))),
      mergeMap((burst) => new Set(burst)),
    ),
  );
}
