/**
 * The kinds a replay serves at the version it has reached: the built-in ones and those the
 * CustomResourceDefinitions replayed so far define, held in a KindCatalog as a server holds them,
 * so routing, discovery and OpenAPI follow it as they follow a server's. The replay server runs no
 * controllers (it makes no writes: no CRD status), so the kinds follow the CRDs themselves, as the
 * time-travel commands read them (../core/custom-kinds.ts): a CRD's kind is served from the version that
 * created it, in the same turn the store applies that entry (before its batch reaches a watcher),
 * and no longer once the entry that deleted it is applied.
 */
import { KindCatalog } from '../../resources/kinds.js';
import type { Store } from '../../store/store.js';
import { collectionOfKind } from '../core/history.js';
import { CRD_KIND, kindsOfCrds } from '../core/custom-kinds.js';

/** A catalog of the built-in kinds that follows the store's CRDs from now on; stop ends the following. */
export function replayKinds(store: Store): { catalog: KindCatalog; stop: () => void } {
  const catalog = new KindCatalog();
  const prefix = `${collectionOfKind(CRD_KIND)}/`;
  /** Each CRD served: the version of it its kind was made from, and the collection it serves. */
  const served = new Map<string, { seq: number; group: string; plural: string }>();
  const sync = () => {
    const present = new Set<string>();
    for (const s of store.list(collectionOfKind(CRD_KIND))) {
      present.add(s.key);
      if (served.get(s.key)?.seq === s.seq) continue;
      const [kind] = kindsOfCrds([s.obj]);
      const before = served.get(s.key);
      if (before && (!kind || before.plural !== kind.plural)) catalog.remove(before.group, before.plural);
      if (!kind) {
        served.delete(s.key);
        continue;
      }
      catalog.define(kind);
      served.set(s.key, { seq: s.seq, group: kind.group, plural: kind.plural });
    }
    for (const [key, s] of served) {
      if (present.has(key)) continue;
      catalog.remove(s.group, s.plural);
      served.delete(key);
    }
  };
  sync();
  const sub = store.changes$.subscribe((batch) => {
    if (batch.some((c) => c.key.startsWith(prefix))) sync();
  });
  return { catalog, stop: () => sub.unsubscribe() };
}
