import { BehaviorSubject } from 'rxjs/internal/BehaviorSubject';
import type { Observable } from 'rxjs/internal/Observable';

/**
 * The watches the server holds open, each by the function that ends it, and their count as an
 * observable: shutdown and reset end them all; startOrchd's watchers() waits on the count, so any
 * number of waiters follow it without sharing a callback slot.
 */
export class OpenWatches implements Iterable<() => void> {
  private readonly ends = new Set<() => void>();
  private readonly count = new BehaviorSubject(0);
  /** The number open now, then after every opening or ending. */
  readonly count$: Observable<number> = this.count.asObservable();

  get size(): number {
    return this.ends.size;
  }

  add(end: () => void): void {
    this.ends.add(end);
    this.count.next(this.ends.size);
  }

  delete(end: () => void): void {
    if (this.ends.delete(end)) this.count.next(this.ends.size);
  }

  [Symbol.iterator](): Iterator<() => void> {
    return this.ends[Symbol.iterator]();
  }
}
