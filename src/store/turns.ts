import { finalize, Observable } from 'rxjs';

/**
 * Work that takes turns: one piece at a time, each started from setImmediate, so whatever I/O the
 * event loop has waiting (commits and the live deliveries they make, requests, socket drains) runs
 * between two pieces. The store's catch-up watch pages go through one of these: however many
 * watchers replay history, they add at most one page's work between two rounds of live work, and
 * take only the time live work leaves (issue 18, catch-up watches).
 */
export class Turns {
  private readonly queue: (() => void)[] = [];
  private busy = false;
  private scheduled = false;

  /** work$, subscribed in its turn; the turn passes on once it completes, errs or is unsubscribed. */
  take<T>(work$: Observable<T>): Observable<T> {
    return new Observable<T>((sub) => {
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      const release = () => {
        if (state === 'running') {
          this.busy = false;
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
    setImmediate(() => {
      this.scheduled = false;
      const run = this.queue.shift();
      if (!run) return;
      this.busy = true;
      run();
    });
  }
}
