import type { Compaction } from './compaction.js';
import { horizonFor, type RetentionPolicy } from './retention.js';
import type { Store } from './store.js';

export interface RetentionTimerOptions {
  policy: RetentionPolicy;
  /** How often the policy is applied. */
  intervalMs?: number;
  onCompacted?: (c: Compaction) => void;
  onError?: (err: unknown) => void;
}

/**
 * Applies the history retention policy to the store now and then (a timer that never keeps the
 * process alive). Its compactions queue behind any other in the store's one guard (compaction.ts).
 */
export class RetentionTimer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly opts: RetentionTimerOptions,
  ) {}

  /** The horizon the policy asks for now. */
  horizon(): number {
    const { store } = this;
    return horizonFor(this.opts.policy, store.appliedSeq, store.now(), (t) => store.versionClock.seqAt(t));
  }

  /** One pass: compacts to the policy's horizon when that moves it. */
  async runOnce(): Promise<Compaction | undefined> {
    const h = this.horizon();
    if (h <= this.store.log.firstSeq) return undefined;
    const done = await this.store.compact(h);
    const { maxAgeMs } = this.opts.policy;
    if (maxAgeMs !== undefined) this.store.versionClock.forget(this.store.now() - maxAgeMs);
    this.opts.onCompacted?.(done);
    return done;
  }

  start(): void {
    if (this.timer || (this.opts.policy.maxAgeMs === undefined && this.opts.policy.maxEntries === undefined)) return;
    this.timer = setInterval(() => {
      this.runOnce().catch((err: unknown) => this.opts.onError?.(err));
    }, this.opts.intervalMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.store.compactionsIdle;
  }
}
