import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { LevelDbLog } from './log/leveldb-log.js';
import { EncryptionReloader, encryptAtRest, type KmsTimings, type ProviderOptions } from './log/encryption/index.js';
import { encryptionDocument } from './config/encryption.js';
import { kinds } from './resources/registry.js';
import { Store } from './store/store.js';
import { Compactor } from './store/compactor.js';
import { DEFAULT_RETENTION, parseRetention, type RetentionPolicy } from './store/retention.js';
import { createApiServer, type ApiServer } from './http/server.js';
import { jsonLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { ServerConfig } from './config/server-config.js';
import { RequestAuthenticator } from './auth/authenticate.js';
import { ReloadingAuthenticator } from './auth/reloading-authenticator.js';
import { authenticationDocument } from './config/authentication.js';
import { authorizationDocument } from './config/authorization.js';
import { buildAuthorizationChain } from './auth/authorization-chain.js';
import { ReloadingAuthorizer } from './auth/reloading-authorizer.js';
import { reloadableFile } from './config/reloader.js';
import { servingTls } from './http/tls.js';
import { directEgress } from './egress/egress.js';
import { egressFromConfig } from './egress/from-config.js';
import type { Tracing } from './observability/tracing.js';
import { credentialsFor } from './config/webhook-admission.js';
import { rbacAuthorizer } from './auth/rbac-authorizer.js';
import { rbacEscalationCheck } from './auth/rbac-escalation.js';
import { StoreRbacSource } from './registry/rbac-source.js';

export interface ServeOptions {
  port: number;
  host: string;
  dataDir: string;
  eventTtlSeconds: number;
  logger?: Logger;
  bookmarkIntervalMs?: number;
  /** How much log history compaction keeps (`--history-retention`); default 24h. */
  historyRetention?: RetentionPolicy;
  /** How often the retention policy is applied; default 60 s. */
  compactionIntervalMs?: number;
  /**
   * How long close() lets requests in flight finish before it closes their connections (a client
   * that never sends the rest of its body must not hold a shutdown forever); default 10 s.
   */
  shutdownTimeoutMs?: number;
  /** How often the authentication configuration file is re-read; default 1 minute, as kube-apiserver. */
  authenticationReloadIntervalMs?: number;
  /** How often the authorization configuration file is re-read; default 1 minute, as kube-apiserver. */
  authorizationReloadIntervalMs?: number;
  /** Re-read the encryption configuration file while running (`--encryption-provider-config-automatic-reload`). */
  encryptionConfigAutomaticReload?: boolean;
  /** How often it is re-read; default 1 minute, as kube-apiserver. */
  encryptionReloadIntervalMs?: number;
  /** KMS v2 poll and cache timings; kube-apiserver's by default (tests shorten them). */
  kmsTimings?: Partial<KmsTimings>;
  /** The validated configuration files (issue 8); held for the parts that will enforce them. */
  config?: ServerConfig;
  /** Run the ValidatingAdmissionPolicy status controller (default true). */
  policyStatus?: boolean;
  /** Unsent bytes past which a watcher catches up from the log instead (`--watch-buffer`). */
  watchBuffer?: number;
  /** How long a watcher that is behind may go without reading before it is ended (`--watch-stall-timeout`). */
  watchStallTimeoutMs?: number;
}

export interface Running {
  url: string;
  port: number;
  logger: Logger;
  api: ApiServer;
  /** Applies the history retention policy periodically; runOnce() compacts now. */
  compactor: Compactor;
  /** Re-reads the encryption configuration file, when asked to (check() reads it now). */
  encryptionReloader: EncryptionReloader | undefined;
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
  // Built before anything opens: an egress selection orchd cannot serve (GRPC) stops the start.
  const egress = opts.config?.egressSelector ? egressFromConfig(opts.config.egressSelector.value) : directEgress;
  // Built before anything opens: an authenticator that cannot be built (CEL) stops the start.
  const authentication = opts.config?.authentication;
  const authOptions = {
    egress,
    onInitError: (issuer: string, err: Error) => logger.error('oidc authenticator: initializing (retried every 10s)', { issuer, error: err.message }),
    onInitialized: (issuer: string, jwksUri: string) => logger.info('oidc authenticator: initialized', { issuer, jwksUri }),
  };
  const initialAuthenticator = new RequestAuthenticator(authentication?.value, authOptions);
  const authenticator = authentication
    ? new ReloadingAuthenticator(initialAuthenticator, {
        ...(await reloadableFile(authentication.file, authenticationDocument)),
        build: (config) => new RequestAuthenticator(config, authOptions),
        ...(opts.authenticationReloadIntervalMs !== undefined ? { intervalMs: opts.authenticationReloadIntervalMs } : {}),
        ...reloadLog(logger, 'authentication', authentication.file),
      })
    : initialAuthenticator;
  const tls = await servingTls({
    host: opts.host,
    dataDir: opts.dataDir,
    ...(opts.config?.tls ? { given: opts.config.tls } : {}),
    authenticationConfigured: authentication !== undefined,
    onRegenerate: (why) => logger.warn('replacing the self-signed serving certificate', { why }),
  });
  if (tls?.selfSigned) {
    logger.info('serving with a self-signed certificate: trust it with kubectl --certificate-authority', { certificateAuthority: tls.certFile, key: tls.keyFile });
  }
  // Encryption at rest wraps the log; built first, so an unsupported provider (kms v1) stops the start.
  const encryption = opts.config?.encryption;
  const providerOptions: ProviderOptions = {
    ...(opts.kmsTimings ? { kmsTimings: opts.kmsTimings } : {}),
    onKmsHealth: (name, problem) =>
      problem === undefined ? logger.info('kms plugin healthy', { name }) : logger.error('kms plugin failed health check probe (retried)', { name, problem }),
  };
  const log = encryptAtRest(
    new LevelDbLog({ path: join(opts.dataDir, 'log'), onBatch: (size, ms) => metrics.logBatch(size, ms) }),
    encryption?.value,
    providerOptions,
  );
  const encryptionReloader =
    encryption && opts.encryptionConfigAutomaticReload
      ? new EncryptionReloader(log, {
          ...(await reloadableFile(encryption.file, encryptionDocument)),
          providers: providerOptions,
          ...(opts.encryptionReloadIntervalMs !== undefined ? { intervalMs: opts.encryptionReloadIntervalMs } : {}),
          ...reloadLog(logger, 'encryption', encryption.file),
          onOutcome: (status, atMs) => metrics.encryptionConfigReload(status, atMs),
        })
      : undefined;
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
  const webhookAdmission = opts.config?.admission?.value.plugins.find((p) => p.name === 'MutatingAdmissionWebhook')?.webhookAdmission;
  // The authorizer chain, built once the store exists (the RBAC authorizer reads it) and before
  // anything listens: a connection file that cannot be read, a match condition that does not
  // compile, RBAC not available stop the start. Without a file, everything is allowed, as
  // kube-apiserver's default AlwaysAllow mode. The server's one RBAC authorizer goes into chainDeps
  // (`rbac`), shared by every chain a reload builds.
  const authorization = opts.config?.authorization;
  const rbacSource = new StoreRbacSource(store);
  const chainDeps = { egress, rbac: rbacAuthorizer(rbacSource) };
  let initialChain;
  try {
    initialChain = buildAuthorizationChain(authorization?.value, chainDeps);
  } catch (err) {
    await log.close();
    authenticator.close();
    const file = authorization?.file ?? '--authorization-config';
    throw new Error((err as Error).message.split('\n').map((line) => `${file}: ${line}`).join('\n'));
  }
  const reloadingAuthorizer = authorization
    ? new ReloadingAuthorizer(initialChain, {
        ...(await reloadableFile(authorization.file, authorizationDocument)),
        deps: chainDeps,
        ...(opts.authorizationReloadIntervalMs !== undefined ? { intervalMs: opts.authorizationReloadIntervalMs } : {}),
        ...reloadLog(logger, 'authorization', authorization.file),
      })
    : undefined;
  const authorizer = reloadingAuthorizer ?? initialChain;
  const api = createApiServer({
    store,
    kinds,
    metrics,
    logger,
    secret: await loadSecret(opts.dataDir),
    eventTtlSeconds: opts.eventTtlSeconds,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    watchLimits: {
      ...(opts.watchBuffer !== undefined ? { maxBuffered: opts.watchBuffer } : {}),
      ...(opts.watchStallTimeoutMs !== undefined ? { stallTimeoutMs: opts.watchStallTimeoutMs } : {}),
    },
    authenticator,
    egress,
    // Without a file the chain allows everything: the server then skips the per-request check.
    ...(authorization ? { authorizer } : {}),
    // Escalation prevention only means something when RBAC decides: under AlwaysAllow nobody holds an RBAC grant.
    ...(authorization?.value.authorizers.some((a) => a.type === 'RBAC') ? { escalationCheck: rbacEscalationCheck(rbacSource, authorizer) } : {}),
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
    ...(opts.policyStatus !== undefined ? { policyStatus: opts.policyStatus } : {}),
    ...(webhookAdmission ? { webhooks: { credentials: (hostPort: string) => credentialsFor(webhookAdmission, hostPort) } } : {}),
    healthChecks: () => log.health().map((h) => ({ check: 'kms-providers', problem: h.problem })),
  });
  let tracing: Tracing | undefined;
  try {
    // Loaded only when configured: without it, the OpenTelemetry API stays the no-op one.
    if (opts.config?.tracing) tracing = (await import('./observability/tracing.js')).startTracing(opts.config.tracing.value);
    await new Promise<void>((resolve, reject) => {
      api.http.once('error', reject);
      api.http.listen(opts.port, opts.host, () => {
        api.http.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // Taken port, bad address, tracing already registered in this process: release the log's lock,
    // so the caller may try again.
    await log.close();
    authenticator.close();
    await tracing?.shutdown();
    authorizer.close();
    rbacSource.close();
    throw err;
  }
  const port = (api.http.address() as AddressInfo).port;
  authenticator.start();
  reloadingAuthorizer?.start();
  const url = `${tls ? 'https' : 'http'}://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  // Said before the replay, which may be long: where to find /livez and /readyz meanwhile.
  logger.info('listening', { url, port, pid: process.pid, dataDir: opts.dataDir, seq: log.lastSeq });
  const started = Date.now();
  // Values sealed by a KMS plugin read back only through it: the replay waits until every plugin
  // answered (retried while /readyz shows the kms-providers check failing), as kube-apiserver waits.
  await log.ready();
  await store.start();
  encryptionReloader?.start();
  await api.start();
  const compactor = new Compactor(store, {
    policy: opts.historyRetention ?? parseRetention(DEFAULT_RETENTION),
    intervalMs: opts.compactionIntervalMs ?? 60_000,
    onCompacted: (c) => logger.info('compacted', { horizon: c.horizon, kept: c.kept, ms: Math.round(c.ms) }),
    onError: (err) => logger.error('compaction failed', { error: err instanceof Error ? err.stack : String(err) }),
  });
  compactor.start();
  if (log.corrupt.size > 0) {
    const keys = [...log.corrupt.entries()].slice(0, 10).map(([key, c]) => `${key}: ${c.message}`);
    logger.warn('stored objects that cannot be read (corrupt objects)', { count: log.corrupt.size, first: keys });
  }
  logger.info('ready', { url, seq: store.appliedSeq, objects: store.view.size, replayMs: Date.now() - started });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    logger,
    api,
    compactor,
    encryptionReloader,
    close: () =>
      (closing ??= (async () => {
        const timeoutMs = opts.shutdownTimeoutMs ?? 10_000;
        const cut = setTimeout(() => {
          // Safe: a write already appended is still made durable by log.close() below; the ones
          // whose connections are cut were waiting for their bodies and have appended nothing.
          logger.warn('requests still in flight at the shutdown timeout: closing their connections', { timeoutMs });
          api.http.closeAllConnections();
        }, timeoutMs);
        try {
          await api.close();
        } finally {
          clearTimeout(cut);
        }
        authenticator.close();
        authorizer.close();
        rbacSource.close();
        encryptionReloader?.close();
        await compactor.stop();
        // The log is the truth and the last checkpoint still stands: one that cannot be sealed now
        // (a KMS plugin down past the data key's expiry) must not keep the log from closing.
        await store.checkpoint().catch((err: unknown) => logger.warn('no checkpoint saved at shutdown: the next start replays more of the log', { error: err instanceof Error ? err.message : String(err) }));
        await store.close();
        await log.close();
        // Last: the spans of the final writes end when the log has made them durable.
        await tracing?.shutdown();
        logger.info('stopped', { seq: log.lastSeq, checkpoint: store.appliedSeq });
      })()),
  };
}

/** How a configuration file's reload is told in the log: done, or refused with the last good one kept. */
function reloadLog(logger: Logger, what: string, file: string): { onReloaded: () => void; onFailed: (problems: string[]) => void } {
  return {
    onReloaded: () => logger.info(`${what} configuration reloaded`, { file }),
    onFailed: (problems) => logger.error(`${what} configuration not reloaded: keeping the last good one`, { file, problems }),
  };
}
