import { catchError, concatMap, defer, EMPTY, Subject } from 'rxjs';
import { runAsSystem } from '../admission/index.js';
import type { Logger } from '../observability/logger.js';

/**
 * Jobs run one at a time in the order given (concatMap), as the controllers beside the API server
 * need: a job's failure is logged under the controller's name and does not stop the ones after it.
 * Jobs run as the system user: they are queued from the store's change stream, which runs in the
 * async context of whichever request's write began the batch, and that user is not the controller.
 */
export function serialQueue(name: string, log: Logger): (job: () => Promise<void>) => void {
  const jobs = new Subject<() => Promise<void>>();
  jobs
    .pipe(
      concatMap((job) =>
        defer(() => runAsSystem(job)).pipe(
          catchError((err: unknown) => {
            log.warn(name, { error: String(err) });
            return EMPTY;
          }),
        ),
      ),
    )
    .subscribe();
  return (job) => jobs.next(job);
}
