import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { LevelDbLog } from './log/leveldb-log.js';
import { kinds } from './resources/registry.js';
import { Store } from './store/store.js';
import { createApiServer, type ApiServer } from './api/server.js';
import { jsonLogger, type Logger } from './api/logger.js';
import { Metrics } from './api/metrics.js';

export interface ServeOptions {
  port: number;
  host: string;
  dataDir: string;
  eventTtlSeconds: number;
  logger?: Logger;
  bookmarkIntervalMs?: number;
}

export interface Running {
  url: string;
  port: number;
  logger: Logger;
  api: ApiServer;
  close(): Promise<void>;
}

/** The continue-token key lives with the data, so tokens survive a restart of the same server. */
async function loadSecret(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, 'continue-token.key');
  try {
    return await readFile(file);
  } catch {
    const key = randomBytes(32);
    await writeFile(file, key, { mode: 0o600 });
    return key;
  }
}

/**
 * Starts orchd: listens first (so /livez and /readyz answer during a long replay), rebuilds the views
 * from the log, then serves. close() stops accepting, ends watches, lets in-flight writes finish,
 * checkpoints and closes the log.
 */
export async function serve(opts: ServeOptions): Promise<Running> {
  const logger = opts.logger ?? jsonLogger();
  await mkdir(opts.dataDir, { recursive: true });
  const metrics = new Metrics();
  const log = new LevelDbLog({ path: join(opts.dataDir, 'log'), onBatch: (size, ms) => metrics.logBatch(size, ms) });
  await log.open();
  let lastReport = 0;
  const store = new Store({
    log,
    onReplayProgress: (applied, total) => {
      const now = Date.now();
      if (now - lastReport < 1000 && applied < total) return;
      lastReport = now;
      logger.info('replaying log', { applied, total, percent: Math.floor((applied / total) * 100) });
    },
  });
  const api = createApiServer({
    store,
    kinds,
    metrics,
    logger,
    secret: await loadSecret(opts.dataDir),
    eventTtlSeconds: opts.eventTtlSeconds,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
  });
  await new Promise<void>((resolve, reject) => {
    api.http.once('error', reject);
    api.http.listen(opts.port, opts.host, () => resolve());
  });
  const port = (api.http.address() as AddressInfo).port;
  const started = Date.now();
  await store.start();
  await api.start();
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  logger.info('ready', { url, seq: store.appliedSeq, objects: store.view.objects.size, replayMs: Date.now() - started });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    logger,
    api,
    close: () =>
      (closing ??= (async () => {
        await api.close();
        await store.checkpoint();
        await store.close();
        await log.close();
      })()),
  };
}
