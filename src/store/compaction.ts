import type { Log } from '../log/log.js';
import type { CheckpointSchedule } from './checkpoint-schedule.js';
import type { View } from './view.js';

/** What one compaction did, for metrics and logs. */
export interface Compaction {
  /** The horizon after it: versions below horizon - 1 are gone. */
  horizon: number;
  /** Log entries below the horizon kept as their key's state at the horizon. */
  kept: number;
  ms: number;
}

const noop = () => {};

/**
 * Drops the log's history below a horizon, one compaction at a time (the one guard: the retention
 * policy's timer, retention-timer.ts, and direct calls queue here alike).
 */
export class CompactionRunner {
  private tail: Promise<unknown> = Promise.resolve();
  /** The last compaction (undefined before the first). */
  last: Compaction | undefined;
  count = 0;

  constructor(
    private readonly log: Log,
    private readonly view: () => View,
    private readonly checkpoints: CheckpointSchedule,
  ) {}

  /**
   * Compacts below `below`, capped so that a checkpoint at or past the horizon exists: a restart
   * rebuilds the view from it, since the log below is gone. Each key keeps its newest revision below
   * the horizon, so every version from horizon - 1 on stays readable and the current state is never
   * lost. Writes and reads go on meanwhile (the log deletes in small steps); reads a compaction
   * overtakes answer COMPACTED.
   */
  run(below: number): Promise<Compaction> {
    const run = this.tail.catch(noop).then(() => this.now(below));
    this.tail = run;
    return run;
  }

  /** Settles (never rejects) once the compactions asked for so far are over. */
  get idle(): Promise<void> {
    return this.tail.then(noop, noop);
  }

  private async now(below: number): Promise<Compaction> {
    const started = performance.now();
    if (below > this.log.firstSeq) await this.checkpoints.fresh();
    const view = this.view();
    const h = Math.min(below, this.checkpoints.savedSeq + 1, view.appliedSeq + 1);
    let kept = 0;
    if (h > this.log.firstSeq) {
      const keep = view.keptAt(h);
      kept = keep.size;
      await this.log.compact(h, (seq) => keep.has(seq));
      // After the log moved its horizon: until then, reads below it still used these revisions.
      view.compactIndex(h);
      this.count++;
    }
    const done: Compaction = { horizon: this.log.firstSeq, kept, ms: performance.now() - started };
    this.last = done;
    return done;
  }
}
