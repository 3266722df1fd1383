/**
 * Writes in flight through the registry, and a gate that can stop new ones: reset() (embed.ts)
 * closes it, waits for the writes already under way to be committed (so the reset deletes them),
 * and opens it again when it is done. A write that arrives meanwhile is refused (503, retry), never
 * committed after the reset behind its back.
 */
import * as E from './errors.js';

export class WriteGate {
  private inFlight = 0;
  private closedBecause: string | undefined;
  private drained: (() => void) | undefined;

  /** Counts a write in; throws Unavailable while the gate is closed. */
  enter(): void {
    if (this.closedBecause !== undefined) throw E.unavailable(this.closedBecause);
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.drained?.();
  }

  /** Runs a write counted in (refused while closed). */
  through<T>(write: () => Promise<T>): Promise<T> {
    this.enter();
    let written: Promise<T>;
    try {
      written = write();
    } catch (err) {
      this.leave();
      return Promise.reject(err as Error);
    }
    // One promise on the write's own, not an async frame's two and an await's turn (a write's hops add up).
    return written.then(
      (v) => {
        this.leave();
        return v;
      },
      (err: unknown) => {
        this.leave();
        throw err;
      },
    );
  }

  /** Refuses new writes (with why) and resolves once those in flight are done. */
  async close(why: string): Promise<void> {
    this.closedBecause = why;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.drained = undefined;
  }

  open(): void {
    this.closedBecause = undefined;
  }
}
