import { currentWriter } from '../admission/index.js';
import type { EncryptedLog } from '../log/encryption/index.js';
import type { Logger } from '../observability/logger.js';
import { Store } from '../store/store.js';
import type { Closers } from './closers.js';

/**
 * The store over the open log, not yet replayed, and replay(), which rebuilds its views from the last
 * checkpoint and the log's tail. Closed after the API server (built later) has let its requests
 * finish, with a checkpoint when the replay had finished.
 */
export function storeOver(log: EncryptedLog, now: (() => number) | undefined, logger: Logger, closers: Closers) {
  let lastReport = 0;
  const store = new Store({
    log,
    writerOf: currentWriter,
    ...(now ? { now } : {}),
    onReplayProgress: (applied, total) => {
      const at = Date.now();
      if (at - lastReport < 1000 && applied < total) return;
      lastReport = at;
      logger.info('replaying log', { applied, total, percent: Math.floor((applied / total) * 100) });
    },
  });
  let replayed = false;
  closers.push('store', async () => {
    // The log is the truth and the last checkpoint still stands: one that cannot be sealed now
    // (a KMS plugin down past the data key's expiry) must not keep the log from closing; a store
    // whose replay did not finish has nothing to checkpoint.
    if (replayed)
      await store
        .checkpoint()
        .catch((err: unknown) => logger.warn('no checkpoint saved at shutdown: the next start replays more of the log', { error: err instanceof Error ? err.message : String(err) }));
    await store.close();
  });
  const replay = async () => {
    // Values sealed by a KMS plugin read back only through it: the replay waits until every plugin answered (retried while /readyz shows kms-providers failing), as kube-apiserver waits.
    await log.ready();
    await store.start();
    replayed = true;
  };
  return { store, replay };
}
