/**
 * What the store shows /metrics, read at each scrape from the views and the watch engine: stored
 * objects and open watches by resource (kube-apiserver's apiserver_storage_objects and
 * apiserver_registered_watchers), the log's head and the history kept.
 */
import type { Sample } from '../observability/samples.js';
import type { KindStrategy } from '../api/strategy.js';
import { collectionOf } from '../api/object-keys.js';
import type { Store } from './store.js';

export function storeSamples(store: Store, kinds: readonly KindStrategy[]): Sample[] {
  const byCollection = new Map(kinds.map((k) => [collectionOf(k), k]));
  const out: Sample[] = [];
  const gauge = (name: string, help: string, value: number, labels?: Record<string, string>) => out.push({ name, help, type: 'gauge', value, ...(labels ? { labels } : {}) });
  for (const [collection, keys] of store.view.collections) {
    const kind = byCollection.get(collection);
    // Kubernetes names the resource `<plural>.<group>`, the core group's by its plural alone.
    if (kind)
      gauge('apiserver_storage_objects', 'Number of stored objects at the time of last check split by kind.', keys.size, { resource: kind.group ? `${kind.plural}.${kind.group}` : kind.plural });
  }
  for (const [collection, n] of store.streams.watchers()) {
    const kind = byCollection.get(collection);
    if (kind) gauge('apiserver_registered_watchers', 'Number of currently registered watchers for a given resources.', n, { group: kind.group, kind: kind.kind });
  }
  gauge('orchd_log_last_seq', 'The newest sequence number the log has committed.', store.log.lastSeq);
  gauge('orchd_objects', 'Objects in the views, every kind.', store.view.size);
  gauge('orchd_view_unmade_parts', 'Parts of the views still held as stored bytes, not yet made into objects.', store.view.unmadeParts);
  gauge('orchd_history_oldest_version', 'The compaction horizon: the oldest resourceVersion still readable.', store.oldestVersion);
  out.push({ name: 'orchd_compactions_total', help: 'Compactions of the log.', type: 'counter', value: store.compactions });
  gauge('orchd_compaction_last_duration_seconds', 'How long the last compaction took.', (store.lastCompaction?.ms ?? 0) / 1000);
  gauge('orchd_compaction_last_kept_entries', 'Log entries the last compaction kept.', store.lastCompaction?.kept ?? 0);
  return out;
}
