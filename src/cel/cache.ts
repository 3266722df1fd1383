/**
 * Compiled programs, kept per owner (a policy's uid) and generation: each expression compiles once
 * per policy generation, and a new generation drops the old one's programs. The values are whatever
 * the caller compiles (a CompileResult, or a whole compiled policy).
 */
export class ProgramCache<T> {
  private readonly owners = new Map<string, { generation: number; entries: Map<string, T> }>();
  /** How many times `build` ran (for tests and metrics). */
  compiles = 0;

  get(owner: string, generation: number, key: string, build: () => T): T {
    let o = this.owners.get(owner);
    if (!o || o.generation !== generation) {
      if (o && o.generation > generation) return build(); // an older generation still in flight: do not evict the newer one
      o = { generation, entries: new Map() };
      this.owners.set(owner, o);
    }
    let v = o.entries.get(key);
    if (v === undefined) {
      this.compiles++;
      v = build();
      o.entries.set(key, v);
    }
    return v;
  }

  /** Drops an owner's programs (the policy was deleted). */
  forget(owner: string): void {
    this.owners.delete(owner);
  }

  get size(): number {
    let n = 0;
    for (const o of this.owners.values()) n += o.entries.size;
    return n;
  }
}
