/**
 * A past version (a read at an old resourceVersion, a watch replayed from one) whose stored value
 * cannot be opened: no configured provider has its key, or a KMS plugin did not open its data key
 * (maybe only for now). The API answers it as Kubernetes' corrupt-object error (500).
 */
export class CorruptEntryError extends Error {
  constructor(
    readonly key: string,
    readonly seq: number,
    readonly why: string,
  ) {
    super(`data from the storage is not transformable revision=${seq}: ${why}`);
    this.name = 'CorruptEntryError';
  }
}

/** Why one object's newest stored state cannot be read, and that state as it is on disk. */
export interface CorruptObject {
  /** The log entry that holds it: the object's resourceVersion. */
  seq: number;
  /** What went wrong (`no matching prefix found`, `cipher: message authentication failed`). */
  message: string;
  /** The stored value, kept so a checkpoint carries it on until a key to open it is back. */
  stored: unknown;
}

/**
 * Objects whose newest state the configured providers cannot open: a key was removed from the
 * encryption configuration too early, or the bytes were damaged. They are out of the view (nothing
 * can use them) but not forgotten: reads of them answer a corrupt-object error, and only an unsafe
 * delete (or a write of a new object by a later state) removes them.
 */
export class CorruptObjects {
  private readonly byKey = new Map<string, CorruptObject>();

  get(key: string): CorruptObject | undefined {
    return this.byKey.get(key);
  }

  set(key: string, c: CorruptObject): void {
    this.byKey.set(key, c);
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  clear(): void {
    this.byKey.clear();
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The corrupt objects of a collection (`<group>/<plural>/`) whose in-collection key starts with prefix, in key order. */
  *under(collection: string, prefix = ''): IterableIterator<[string, CorruptObject]> {
    const start = `${collection}/${prefix}`;
    const hits = [...this.byKey].filter(([k]) => k.startsWith(start));
    hits.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    yield* hits;
  }

  entries(): IterableIterator<[string, CorruptObject]> {
    return this.byKey.entries();
  }
}
