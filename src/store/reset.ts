/**
 * reset(): orchd back to the state its start left it in (the baseline, taken when it became ready),
 * in place, in milliseconds — the same server, port and clients. It goes through the log like every
 * change, so everything that follows the store (controllers, admission and RBAC caches, the garbage
 * collector's index) sees it as it sees writes:
 *
 * 1. Every open watch is ended, as a restart ends them: clients watch again from their last
 *    resourceVersion, which step 3 compacts, so they get 410 Gone and relist. One that comes back
 *    before step 3 is done gets the 410 too (store.resetting), never step 2's deletes.
 * 2. One batch deletes every object written since the start and puts back the baseline's objects
 *    (the system namespaces and bootstrap RBAC the start wrote, what a LevelDB log already held)
 *    that were changed or deleted. No finalizer holds a delete.
 * 3. The log is compacted to its end: only the objects that remain keep their one entry; every
 *    other entry, the history of every deleted key and the views' index of it are gone.
 *
 * resourceVersions keep counting up: a client that held one from before never sees it again.
 */
import type { KubeObject } from '../api/types.js';
import type { Store } from './store.js';

/** The objects at the start: each key's object and the version it was at. */
export type Baseline = Map<string, { seq: number; obj: KubeObject }>;

/** The objects in the store now, as the baseline a reset returns to. */
export function baselineOf(store: Store): Baseline {
  const out: Baseline = new Map();
  for (const s of store.view.objects()) out.set(s.key, { seq: s.seq, obj: structuredClone(s.obj) });
  return out;
}

export async function resetTo(store: Store, baseline: Baseline, endWatches: () => void): Promise<void> {
  let done!: () => void;
  // Set before the watches end, so a watcher that comes straight back is expired (see watch$).
  store.resetting = new Promise<void>((resolve) => (done = resolve));
  try {
    endWatches();
    await replaceAll(store, baseline);
    await store.compact(store.appliedSeq + 1);
  } finally {
    store.resetting = undefined;
    done();
  }
}

async function replaceAll(store: Store, baseline: Baseline): Promise<void> {
  // Appended in one turn of the event loop: one batch, applied to the views at once.
  const writes: Promise<unknown>[] = [];
  // Preconditions from the newest state (a write still on its way counts), so none of these can fail.
  const restore = (key: string, base: { obj: KubeObject }) =>
    writes.push(
      store.put(key, structuredClone(base.obj), store.latest(key) ? 'any' : 'absent').then((s) => {
        baseline.set(key, { seq: s.seq, obj: base.obj });
      }),
    );
  for (const s of store.view.objects()) {
    const base = baseline.get(s.key);
    if (base?.seq === s.seq) continue;
    if (base) restore(s.key, base);
    else if (store.latest(s.key)) writes.push(store.remove(s.key, structuredClone(s.obj), 'any'));
  }
  for (const [key, base] of baseline) if (!store.get(key)) restore(key, base);
  await Promise.all(writes);
}
