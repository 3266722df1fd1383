/** The largest buffer one read copies its pages into. */
const SLAB_MAX = 64 << 20;

/**
 * The buffers one read copies its pages into, each twice the size of the one before, up to
 * SLAB_MAX: a short read (a watch catching up) allocates about what it reads, a replay of a million
 * entries a few dozen buffers instead of one per page (a thousand separately allocated megabytes
 * outside the heap each pushed V8 towards another full collection).
 */
export class Slabs {
  private slab: Buffer | undefined;
  private used = 0;

  /** Room for n bytes: a buffer and where in it they go. */
  take(n: number): { slab: Buffer; at: number } {
    if (!this.slab || this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, Math.min(SLAB_MAX, 2 * (this.slab?.length ?? 0))));
      this.used = 0;
    }
    const at = this.used;
    this.used += n;
    return { slab: this.slab, at };
  }
}
