import { finalize, Observable } from 'rxjs';

/**
 * Work that takes turns: one piece at a time, and the next one only after the event loop has been
 * left to other work for as long as the last piece took (from setImmediate when that was under a
 * millisecond). So whatever I/O is waiting (commits and the live deliveries they make, requests,
 * socket drains) runs between two pieces, and the pieces take at most about half of the server's
 * time. The store's catch-up watch pages go through one of these: however many watchers replay
 * history, they add at most one page's work between two rounds of live work (issue 18, catch-up
 * watches; bench/RESULTS.md section 23: ten catch-ups of 60 MB took the live p99 from 34 ms to 5.1 s
 * before turns, to 194 ms with turns back to back, and to 91 ms with this pause).
 */
export class Turns {
  private readonly queue: (() => void)[] = [];
  private busy = false;
  private scheduled = false;
  private startedAt = 0;
  /** How long the last piece took, ms: the pause before the next. */
  private lastMs = 0;

  /** work$, subscribed in its turn; the turn passes on once it completes, errs or is unsubscribed. */
  take<T>(work$: Observable<T>): Observable<T> {
    return new Observable<T>((sub) => {
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      const release = () => {
        if (state === 'running') {
          this.busy = false;
          this.lastMs = performance.now() - this.startedAt;
          this.next();
        }
        state = 'done';
      };
      const run = () => {
        state = 'running';
        sub.add(work$.pipe(finalize(release)).subscribe(sub));
      };
      this.queue.push(run);
      this.next();
      return () => {
        if (state === 'waiting') this.queue.splice(this.queue.indexOf(run), 1);
        release();
      };
    });
  }

  /** Pieces waiting for their turn (the one running not counted). */
  get waiting(): number {
    return this.queue.length;
  }

  private next(): void {
    if (this.busy || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      const run = this.queue.shift();
      if (!run) return;
      this.busy = true;
      this.startedAt = performance.now();
      run();
    };
    if (this.lastMs >= 1) setTimeout(go, this.lastMs);
    else setImmediate(go);
  }
}
