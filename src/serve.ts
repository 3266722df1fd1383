import { prepareDataDir } from './config/data-dir.js';
import type { EncryptionConfiguration, ResourceProviders } from './log/encryption/index.js';
import type { Store } from './store/store.js';
import type { RetentionTimer } from './store/retention-timer.js';
import { typeCheckPolicy } from './admission/index.js';
import type { ApiServer } from './http/server.js';
import { needsTls } from './http/tls.js';
import { startControllers } from './controllers/start.js';
import { jsonLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { ConfigReloader } from './config/reloader.js';
import { directEgress } from './egress/egress.js';
import { egressFromConfig } from './egress/from-config.js';
import { Closers } from './serve/closers.js';
import type { ServeOptions } from './serve/serve-options.js';
import { startTracing } from './serve/start-tracing.js';
import { configuredAuthenticator } from './serve/configured-authenticator.js';
import { servingCertificate } from './serve/serving-certificate.js';
import { openLog } from './serve/open-log.js';
import { storeOver } from './serve/store-over-log.js';
import { configuredAuthorizer } from './serve/configured-authorizer.js';
import { servedRegistry } from './serve/served-registry.js';
import { listeningApiServer } from './serve/listening-api-server.js';
import { startCompactor } from './serve/start-compactor.js';

// What serve() is asked to start is declared beside its steps (serve/), and named here for its callers.
export type { ServeOptions, StorageKind } from './serve/serve-options.js';

export interface Running {
  url: string;
  port: number;
  logger: Logger;
  api: ApiServer;
  /**
   * The store behind the registry: for the composition's own parts (startOrchd's reset and history,
   * tests that compact or read the log); requests and controllers reach it only through api.context.objects.
   */
  store: Store;
  /** Applies the history retention policy periodically; runOnce() compacts now. */
  compactor: RetentionTimer;
  /** Re-reads the encryption configuration file, when asked to (check() reads it now). */
  encryptionReloader: ConfigReloader<EncryptionConfiguration, ResourceProviders> | undefined;
  close(): Promise<void>;
}

/**
 * Starts orchd: listens first (so /livez and /readyz answer during a long replay), rebuilds the views
 * from the log, starts the controllers, then serves. close() stops the controllers, stops accepting,
 * ends watches, lets in-flight writes finish, checkpoints and closes the log.
 */
export async function serve(opts: ServeOptions): Promise<Running> {
  const logger = opts.logger ?? jsonLogger();
  const closers = new Closers();
  try {
    return await start(opts, logger, closers);
  } catch (err) {
    // The start's own error is the one to report; what closing then fails on is logged.
    await closers.close(logger).catch(() => undefined);
    throw err;
  }
}

/**
 * The composition root: each step (serve/) builds a piece from what the steps before it made and
 * pushes its closer on the one stack, so the order of these lines is the order of the start and,
 * reversed, of the shutdown.
 */
async function start(opts: ServeOptions, logger: Logger, closers: Closers): Promise<Running> {
  await prepareStorage(opts);
  const metrics = new Metrics();
  // Built before anything opens: an egress selection orchd cannot serve (GRPC) stops the start.
  const egress = opts.config?.egressSelector ? egressFromConfig(opts.config.egressSelector.value) : directEgress;
  await startTracing(opts.config?.tracing, logger, closers);
  const authenticator = await configuredAuthenticator(opts, logger, egress, closers);
  const tls = await servingCertificate(opts, logger);
  const { log, encryptionReloader, etcdLog } = await openLog(opts, logger, metrics, closers);
  const { store, replay } = storeOver(log, opts.now, logger, closers);
  const authorizer = await configuredAuthorizer(opts, logger, egress, store, closers);
  const { servedKinds, objects } = await servedRegistry(opts, { store, logger, egress, sharedSecret: etcdLog?.secret, ...authorizer.configured, escalationCheck: authorizer.escalationCheck });
  const server = { objects, kinds: servedKinds.all, authenticator, ...authorizer.configured, metrics, logger, log, etcd: etcdLog, tls: tls ? { cert: tls.cert, key: tls.key } : undefined };
  const { api, listening, url } = await listeningApiServer(opts, server, closers);
  authenticator.start();
  authorizer.start();
  // Said before the replay, which may be long: where to find /livez and /readyz meanwhile.
  logger.info('listening', { url, port: listening.port, pid: process.pid, storage: opts.storage ?? 'leveldb', dataDir: opts.dataDir, seq: log.lastSeq });
  const started = Date.now();
  await replay();
  if (encryptionReloader) {
    encryptionReloader.start();
    closers.push('encryption reloader', () => encryptionReloader.close());
  }
  const stops = await startControllers(objects, servedKinds.all, {
    servedKinds,
    logger,
    typeCheckPolicy,
    eventTtlSeconds: opts.eventTtlSeconds,
    ...(opts.policyStatus !== undefined ? { policyStatus: opts.policyStatus } : {}),
  });
  for (const stop of stops) closers.push('controller', stop);
  await api.start();
  listening.open();
  const compactor = startCompactor(opts, store, logger, closers);
  if (log.corrupt.size > 0) {
    const keys = [...log.corrupt.entries()].slice(0, 10).map(([key, c]) => `${key}: ${c.message}`);
    logger.warn('stored objects that cannot be read (corrupt objects)', { count: log.corrupt.size, first: keys });
  }
  logger.info('ready', { url, seq: store.appliedSeq, objects: store.view.size, replayMs: Date.now() - started, ...store.startedFrom });
  let closing: Promise<void> | undefined;
  return {
    url,
    port: listening.port,
    logger,
    api,
    store,
    compactor,
    encryptionReloader,
    close: () =>
      (closing ??= (async () => {
        await closers.close(logger);
        logger.info('stopped', { seq: log.lastSeq, checkpoint: store.appliedSeq });
      })()),
  };
}

/** The data folder, made ready; without one, only memory storage starts, and HTTPS then needs a configured certificate. */
async function prepareStorage(opts: ServeOptions): Promise<void> {
  if (opts.dataDir !== undefined) await prepareDataDir(opts.dataDir);
  else if (opts.storage !== 'memory') throw new Error('the LevelDB log needs a data folder');
  else if (!opts.config?.tls && needsTls({ host: opts.host, authenticationConfigured: opts.config?.authentication !== undefined })) {
    throw new Error('HTTPS without a serving certificate needs a data folder for the self-signed one, also with memory storage');
  }
}
