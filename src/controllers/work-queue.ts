import { runAsSystem } from '../admission/index.js';
import type { Logger } from '../observability/logger.js';

/**
 * Jobs run one at a time in the order given, as the controllers beside the API server need: a
 * job's failure is logged under the controller's name and does not stop the ones after it.
 * Jobs run as the system user: they are queued from the store's change stream, which runs in the
 * async context of whichever request's write began the batch, and that user is not the controller.
 */
export function serialQueue(name: string, log: Logger): (job: () => Promise<void>) => void {
  const queue: (() => Promise<void>)[] = [];
  let draining = false;
  return (job) => {
    queue.push(job);
    if (draining) return;
    draining = true;
    void runAsSystem(async () => {
      while (queue.length) await queue.shift()!().catch((err: unknown) => log.warn(name, { error: String(err) }));
      draining = false;
    });
  };
}
