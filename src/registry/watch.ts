/**
 * A watch through the door: where its stream starts (the read plan's watch rows, as Kubernetes'
 * watch cache decides it), what it selects and where the live index files it, decided once when the
 * request is read; the engine (src/store/watch.ts) then replays the log from there and follows the
 * committed changes of the collection, live, with no gap and no duplicate.
 */
import type { Observable } from 'rxjs';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import { collectionOf, suffixOf } from '../api/object-keys.js';
import type { Store } from '../store/store.js';
import { watch$, type WatchEvent, type WatchFlow, type WatchRequest } from '../store/watch.js';
import { planOf, type VersionRequest } from './consistency.js';
import { selectionOf, watchRoute, type Selectors } from './selection.js';

export type { WatchEvent, WatchFlow };

export interface WatchQuery extends VersionRequest {
  /** The deprecated /watch/<plural>/<name> path: one object. */
  name?: string;
  selectors: Selectors;
  sendInitialEvents?: boolean;
  /** Periodic bookmarks (undefined: none). */
  bookmarkIntervalMs?: number;
  timeoutMs: number;
}

/** Starts the prepared watch for one connection: flow says how far the connection is behind. */
export type OpenWatch = (flow: WatchFlow, stallTimeoutMs: number) => Observable<WatchEvent[]>;

/** Prepares a watch: a malformed selector is refused here, before any stream (or WebSocket) starts. */
export function prepareWatch(store: Store, kind: KindStrategy, namespace: string | undefined, q: WatchQuery): OpenWatch {
  const sel = selectionOf(kind, q.selectors);
  let matches = sel.matches;
  if (q.name !== undefined) {
    // One object: a name field selector.
    const name = q.name;
    const rest = matches;
    matches = (o: KubeObject) => o.metadata.name === name && (!rest || rest(o));
  }
  const collection = collectionOf(kind);
  const prefix = kind.namespaced && namespace !== undefined ? suffixOf(namespace, '') : '';
  const plan = planOf(store, {
    watch: true,
    resourceVersion: q.resourceVersion ?? 0,
    ...(q.resourceVersionMatch ? { resourceVersionMatch: q.resourceVersionMatch } : {}),
    ...(q.sendInitialEvents !== undefined ? { sendInitialEvents: q.sendInitialEvents } : {}),
  });
  const req: Omit<WatchRequest, 'stallTimeoutMs'> = {
    collection,
    keyPrefix: `${collection}/${prefix}`,
    route: watchRoute(kind, namespace, q.name, sel),
    ...(plan.kind === 'watchAfter' ? { after: plan.seq } : plan.kind === 'watchInitial' && plan.freshAs !== undefined ? { freshAs: plan.freshAs } : {}),
    initialEventsEnd: q.sendInitialEvents === true,
    ...(q.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: q.bookmarkIntervalMs } : {}),
    timeoutMs: q.timeoutMs,
    ...(matches ? { matches } : {}),
    current: () => store.list(collection, prefix),
  };
  return (flow, stallTimeoutMs) => watch$(store, { ...req, stallTimeoutMs }, flow);
}
