/**
 * Open data key seeds by what the plugin was given to open them (encrypted-object.ts seedCacheKey).
 * Bounded in time, not in count, as kube-apiserver's KMS v2 cache is: a seed serves every write until
 * the plugin's key changes, so entries number the key ids in use times the restarts, and an entry
 * unused for the TTL is dropped (the next read that needs it asks the plugin again).
 */
export class SeedCache {
  private readonly entries = new Map<string, { seed: Buffer; expires: number }>();
  private lastSweep: number;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    this.lastSweep = now();
  }

  get(key: string): Buffer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.seed;
  }

  /** Adds or refreshes an entry; now and then drops the expired ones nobody asked for. */
  set(key: string, seed: Buffer): void {
    const now = this.now();
    this.entries.set(key, { seed, expires: now + this.ttlMs });
    if (now - this.lastSweep < this.ttlMs) return;
    this.lastSweep = now;
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
  }

  get size(): number {
    return this.entries.size;
  }
}
