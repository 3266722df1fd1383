/**
 * prom-client's default metrics (`process_*`, and `nodejs_*` for event-loop lag, GC and heap): one
 * set per process, however many orchd servers it runs (a test process may start dozens), since
 * they describe the process and their collectors (a GC observer, an event-loop delay monitor) need
 * setting up only once.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | undefined;

export function processMetrics(): Registry {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
