/**
 * Appends etcd has answered, waiting for the watch to bring their revision: each resolves once the
 * log has applied through it, so a writer reads its own write on this replica.
 */
export class Acks {
  /** Sorted by seq. */
  private readonly waiting: { seq: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  private drained: (() => void) | undefined;

  /** Resolves once applied() reaches seq. */
  wait(seq: number, applied: () => number): Promise<void> {
    if (applied() >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let i = this.waiting.length;
      while (i > 0 && this.waiting[i - 1].seq > seq) i--;
      this.waiting.splice(i, 0, { seq, resolve, reject });
    });
  }

  /** The log has applied through seq. */
  through(seq: number): void {
    let n = 0;
    while (n < this.waiting.length && this.waiting[n].seq <= seq) this.waiting[n++].resolve();
    if (n > 0) this.waiting.splice(0, n);
    if (this.waiting.length === 0) this.drained?.();
  }

  /** Settles once nothing waits, or after ms. */
  idle(ms: number): Promise<void> {
    if (this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  fail(err: Error): void {
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}
