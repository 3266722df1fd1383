/**
 * A stored value's resourceVersion is the seq of the entry that holds it, whatever the value's bytes
 * say: a shared log (etcd) stores values without it, as kube-apiserver does, and learns the seq only
 * when the write commits; LevelDB's values carry it (see abstract-log.ts append). So every reader
 * that turns an entry into an object or JSON stamps it from the seq: the codec's entries, the view's
 * objects, encode-once JSON (msgpack-json.ts), the encrypted log's opened values, and the writer's
 * answer. Values that are not objects with a metadata object (a test's bare string) are left alone.
 */
export function stampVersion<T>(value: T, seq: number): T {
  const metadata = metadataOf(value);
  if (metadata) metadata.resourceVersion = String(seq);
  return value;
}

/** Takes the resourceVersion out of a value about to be stored where the seq is not yet known. */
export function unstampVersion(value: unknown): void {
  const metadata = metadataOf(value);
  if (metadata && 'resourceVersion' in metadata) delete metadata.resourceVersion;
}

function metadataOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const metadata = (value as { metadata?: unknown }).metadata;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : undefined;
}
