import { DEFAULT_RETENTION, parseRetention } from '../config/retention.js';
import type { Logger } from '../observability/logger.js';
import { RetentionTimer } from '../store/retention-timer.js';
import type { Store } from '../store/store.js';
import type { Closers } from './closers.js';
import type { ServeOptions } from './serve-options.js';

/** The compactor, started: it applies the history retention policy every interval (default 24 h kept, every 60 s). */
export function startCompactor(opts: ServeOptions, store: Store, logger: Logger, closers: Closers): RetentionTimer {
  const compactor = new RetentionTimer(store, {
    policy: opts.historyRetention ?? parseRetention(DEFAULT_RETENTION),
    intervalMs: opts.compactionIntervalMs ?? 60_000,
    onCompacted: (c) => logger.info('compacted', { horizon: c.horizon, kept: c.kept, ms: Math.round(c.ms) }),
    onError: (err) => logger.error('compaction failed', { error: err instanceof Error ? err.stack : String(err) }),
  });
  compactor.start();
  closers.push('compactor', () => compactor.stop());
  return compactor;
}
