import { BehaviorSubject, concatMap, filter, firstValueFrom, throwError, timeout } from 'rxjs';
import type { Observable } from 'rxjs';

/**
 * The watches the server holds open, each by the function that ends it, and their count as an
 * observable: shutdown and reset end them all; startOrchd's watchers() waits on the count, so any
 * number of waiters follow it without sharing a callback slot.
 */
/** Ends a watch; given why, the watch's last event is an ERROR saying it. */
export type EndWatch = (why?: unknown) => void;

export class OpenWatches implements Iterable<EndWatch> {
  private readonly ends = new Set<EndWatch>();
  private readonly count = new BehaviorSubject(0);
  /** The number open now, then after every opening or ending. */
  readonly count$: Observable<number> = this.count.asObservable();

  get size(): number {
    return this.ends.size;
  }

  add(end: EndWatch): void {
    this.ends.add(end);
    this.count.next(this.ends.size);
  }

  delete(end: EndWatch): void {
    if (this.ends.delete(end)) this.count.next(this.ends.size);
  }

  /**
   * Resolves to the count once at least n watches are open; rejects after timeoutMs. A count that
   * reaches n is looked at again after the sockets' pending events are handled: a client that ended
   * its watch just before (an informer's stop()) has closed its connection, and the close is then
   * seen and the watch no longer counted.
   */
  atLeast(n: number, timeoutMs: number): Promise<number> {
    return firstValueFrom(
      this.count$.pipe(
        filter((open) => open >= n),
        concatMap(async () => {
          await ioTurn();
          await ioTurn();
          return this.size;
        }),
        filter((open) => open >= n),
        timeout({ first: timeoutMs, with: () => throwError(() => new Error(`${this.size} of ${n} watches open after ${timeoutMs} ms`)) }),
      ),
    );
  }

  [Symbol.iterator](): Iterator<EndWatch> {
    return this.ends[Symbol.iterator]();
  }
}

/** One turn of the event loop past its I/O phase (setImmediate runs right after it). */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
