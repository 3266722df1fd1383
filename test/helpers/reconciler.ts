/**
 * A controller as a client-node informer drives one: on each add and update, and at each (re)connect
 * for every object it holds (its resync), it reconciles the object, a few at a time as a controller's
 * workers do (a burst of hundreds at once would meet the server's max-in-flight 429, which client-go
 * retries and this does not). What each write got is kept in order: the status, or the error's code
 * (ECONNREFUSED, ...).
 */
import type { Informer, KubernetesObject, ObjectCache } from '@kubernetes/client-node';

/** reconcile makes the write the object needs and answers its status, or undefined when none is needed. */
export function reconciler(
  informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>,
  reconcile: (o: KubernetesObject) => Promise<number | undefined>,
  { workers = 8 }: { workers?: number } = {},
): string[] {
  const writes: string[] = [];
  const queue: KubernetesObject[] = [];
  let busy = 0;
  const work = async () => {
    busy++;
    for (let o = queue.shift(); o !== undefined; o = queue.shift()) {
      try {
        const status = await reconcile(o);
        if (status !== undefined) writes.push(String(status));
      } catch (err) {
        writes.push(String((err as { cause?: { code?: string } }).cause?.code ?? err));
      }
    }
    busy--;
  };
  const act = (o: KubernetesObject) => {
    queue.push(o);
    if (busy < workers) void work();
  };
  informer.on('add', act);
  informer.on('update', act);
  informer.on('connect', () => informer.list().forEach(act));
  return writes;
}
