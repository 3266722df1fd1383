import { join } from 'node:path';
import { loadSecret, messageWithCause, prepareDataDir } from './config/data-dir.js';
import { readForkPoints } from './config/fork-origin.js';
import { etcdCredentials, type EtcdFlags } from './config/etcd-credentials.js';
import { MemoryLog } from './log/memory-log.js';
import { LogError } from './log/log.js';
import { encryptAtRest, providerSwap, type EncryptionConfiguration, type KmsTimings, type ProviderOptions, type ResourceProviders } from './log/encryption/index.js';
import { encryptionDocument } from './config/encryption.js';
import { KindCatalog, kinds } from './resources/kinds.js';
import { Store } from './store/store.js';
import { currentWriter, typeCheckPolicy } from './admission/index.js';
import { RetentionTimer } from './store/retention-timer.js';
import type { RetentionPolicy } from './store/retention.js';
import { DEFAULT_RETENTION, parseRetention } from './config/retention.js';
import { AuditFile } from './http/audit-file.js';
import { closeApiServer, createApiServer, listenOrTakeOver, type ApiServer } from './http/server.js';
import type { InflightLimits } from './http/inflight.js';
import { startControllers } from './controllers/start.js';
import { buildRegistry } from './registry/build.js';
import { jsonLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { ServerConfig } from './config/server-config.js';
import { authenticatorFromConfig } from './auth/from-config.js';
import { authorizationDocument } from './config/authorization.js';
import { buildAuthorizationChain } from './auth/authorization-chain.js';
import { ReloadingAuthorizer } from './auth/reloading-authorizer.js';
import { ConfigReloader, reloadableFile } from './config/reloader.js';
import { needsTls, servingTls } from './http/tls.js';
import { directEgress, type Egress } from './egress/egress.js';
import { egressFromConfig } from './egress/from-config.js';
import { credentialsFor } from './config/webhook-admission.js';
import { rbacAuthorizer } from './auth/rbac-authorizer.js';
import { rbacEscalationCheck } from './auth/rbac-escalation.js';
import { StoreRbacSource } from './registry/rbac-source.js';
import { reloadLog } from './serve/reload-log.js';

export interface ServeOptions {
  port: number;
  host: string;
  /**
   * The folder of the LevelDB log, the continue-token key and a self-signed certificate. Optional
   * with memory storage: the key is then made anew at each start, and a self-signed certificate
   * cannot be kept (configure TLS with a certificate, or give a folder).
   */
  dataDir?: string;
  /** Where the log lives: LevelDB in dataDir (default), or memory (`--storage memory`), gone at close. */
  storage?: StorageKind;
  /** The clock that dates creation and deletion timestamps and history retention; default Date.now. */
  now?: () => number;
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
  /** `--storage etcd`: the log is on etcd, shared with every replica that names it (the data folder then holds this replica's checkpoints and serving certificate). */
  etcd?: { servers: string[] } & EtcdFlags;
  /** Unsent bytes past which a watcher catches up from the log instead (`--watch-buffer`). */
  watchBuffer?: number;
  /** How long a watcher that is behind may go without reading before it is ended (`--watch-stall-timeout`). */
  watchStallTimeoutMs?: number;
  /** Where the audit log is appended (`--audit-log-path`; `-`: stdout); its policy is config.auditPolicy. */
  auditLogPath?: string;
  /** Requests served at once (`--max-requests-inflight`, `--max-mutating-requests-inflight`); 400 and 200 by default. */
  inflight?: InflightLimits;
  /** How long a request's headers and body may take to arrive (`--request-timeout`); 60 s by default. */
  requestTimeoutMs?: number;
  /** How long its headers may take; kube-apiserver's 32 s by default (tests shorten it). */
  headersTimeoutMs?: number;
  /** Faults injected on demand (`--faults FILE`, startOrchd({faults})): the rules in force at start, already validated. */
  faults?: import('./config/faults.js').FaultConfiguration;
  handover?: import('./http/handover-port.js').HandoverPort; // a replay's port, listening, that its fork takes over once ready: held clients are never refused
}

export type StorageKind = 'leveldb' | 'memory' | 'etcd';

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
 * Everything serve() started, closed in reverse order: what was built last (controllers, the
 * compactor) stops first, the log late, tracing last. A start that fails half-way closes what it
 * had opened with the same stack, so a caller may try again (the log's lock is released).
 */
class Closers {
  private readonly stack: { name: string; close: () => unknown }[] = [];

  push(name: string, close: () => unknown): void {
    this.stack.push({ name, close });
  }

  /**
   * Closes each in turn, newest first. A closer that fails is logged and does not stop the rest (the
   * log must still close); the first failure is thrown once all have run.
   */
  async close(logger: Logger): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (let c = this.stack.pop(); c; c = this.stack.pop()) {
      try {
        await c.close();
      } catch (err) {
        logger.warn(`closing ${c.name} failed`, { error: err instanceof Error ? err.message : String(err) });
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }
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
 * The composition root: each piece built, started, and its closer pushed on the one stack. Long on
 * purpose: the order of its lines is the order of the start and, reversed, of the shutdown.
 */
async function start(opts: ServeOptions, logger: Logger, closers: Closers): Promise<Running> {
  const { dataDir } = opts;
  if (dataDir !== undefined) await prepareDataDir(dataDir);
  else if (opts.storage !== 'memory') throw new Error('the LevelDB log needs a data folder');
  else if (!opts.config?.tls && needsTls({ host: opts.host, authenticationConfigured: opts.config?.authentication !== undefined })) {
    throw new Error('HTTPS without a serving certificate needs a data folder for the self-signed one, also with memory storage');
  }
  const metrics = new Metrics();
  // Built before anything opens: an egress selection orchd cannot serve (GRPC) stops the start.
  const egress = opts.config?.egressSelector ? egressFromConfig(opts.config.egressSelector.value) : directEgress;
  // Loaded only when configured (else the OpenTelemetry API stays the no-op one); closed last: the spans of the final writes end when the log made them durable.
  if (opts.config?.tracing) {
    const tracing = (await import('./observability/tracing.js')).startTracing(opts.config.tracing.value);
    // Spans the collector did not take (it is down) are lost, as kube-apiserver loses them: a
    // telemetry failure, not a failed shutdown.
    closers.push('tracing', () => tracing.shutdown().catch((err: unknown) => logger.warn('tracing: spans not delivered at shutdown', { error: err instanceof Error ? err.message : String(err) })));
  }
  const authenticator = await authenticatorFromConfig(opts.config?.authentication, {
    logger,
    egress,
    ...(opts.authenticationReloadIntervalMs !== undefined ? { reloadIntervalMs: opts.authenticationReloadIntervalMs } : {}),
    ...(opts.config?.authentication ? reloadLog(logger, 'authentication', opts.config.authentication.file) : {}),
  });
  closers.push('authenticator', () => authenticator.close());
  const tls = await servingTls({
    host: opts.host,
    dataDir: dataDir ?? '',
    ...(opts.config?.tls ? { given: opts.config.tls } : {}),
    authenticationConfigured: opts.config?.authentication !== undefined,
    onRegenerate: (why) => logger.warn('replacing the self-signed serving certificate', { why }),
  });
  if (tls?.selfSigned) {
    logger.info('serving with a self-signed certificate: trust it with kubectl --certificate-authority', { certificateAuthority: tls.certFile, key: tls.keyFile });
  }
  const { log, encryptionReloader, etcdLog } = await encryptedLog(opts, logger, metrics);
  await log.open().catch((err: unknown) => {
    if (err instanceof LogError && err.code === 'LOCKED') {
      throw new Error(`data folder ${dataDir}: another orchd holds it (its log is locked: ${join(dataDir ?? '', 'log', 'LOCK')}); stop that one or choose another --data-dir`);
    }
    throw new Error(`data folder ${dataDir}: cannot open its log: ${messageWithCause(err)}`);
  });
  closers.push('log', () => log.close());
  let lastReport = 0;
  const store = new Store({
    log,
    writerOf: currentWriter,
    ...(opts.now ? { now: opts.now } : {}),
    onReplayProgress: (applied, total) => {
      const now = Date.now();
      if (now - lastReport < 1000 && applied < total) return;
      lastReport = now;
      logger.info('replaying log', { applied, total, percent: Math.floor((applied / total) * 100) });
    },
  });
  // Closed after the API server (which is built later) has let its requests finish.
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
  const { authorizer, escalationCheck } = await authorizerFor(opts, logger, egress, store, closers);
  const webhookAdmission = opts.config?.admission?.value.plugins.find((p) => p.name === 'MutatingAdmissionWebhook')?.webhookAdmission;
  // Without a file the chain allows everything: the server then skips the per-request check.
  const configuredAuthorizer = opts.config?.authorization ? { authorizer } : {};
  // This server's kinds: the built-in ones, and those its CustomResourceDefinitions define while it runs.
  const servedKinds = new KindCatalog(kinds);
  const objects = buildRegistry(store, servedKinds.all, {
    logger,
    // Replicas share one: a list's next page may be asked of another replica.
    secret: etcdLog?.secret ?? (await loadSecret(dataDir)),
    ...(opts.now ? { now: opts.now } : {}),
    egress,
    ...configuredAuthorizer,
    ...(escalationCheck ? { escalationCheck } : {}),
    ...(webhookAdmission ? { webhooks: { credentials: (hostPort: string) => credentialsFor(webhookAdmission, hostPort) } } : {}),
  });
  const api = createApiServer({
    faults: { config: opts.faults, now: opts.now, dataDir: opts.storage === 'leveldb' || !opts.storage ? dataDir : undefined },
    audit: opts.auditLogPath === undefined ? undefined : AuditFile.open(opts.auditLogPath, opts.config?.auditPolicy?.value),
    kinds: servedKinds.all,
    objects,
    metrics,
    logger,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    watchLimits: {
      ...(opts.watchBuffer !== undefined ? { maxBuffered: opts.watchBuffer } : {}),
      ...(opts.watchStallTimeoutMs !== undefined ? { stallTimeoutMs: opts.watchStallTimeoutMs } : {}),
    },
    authenticator,
    ...configuredAuthorizer,
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
    ...(opts.inflight ? { inflight: opts.inflight } : {}),
    ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    ...(opts.headersTimeoutMs !== undefined ? { headersTimeoutMs: opts.headersTimeoutMs } : {}),
    // A folder made by `orchd fork`: its log holds its source's history up to the fork point.
    forks: dataDir !== undefined && !etcdLog ? await readForkPoints(dataDir) : [],
    healthChecks: () => [
      ...log.health().map((h) => ({ check: 'kms-providers', problem: h.problem })),
      ...(etcdLog && !etcdLog.connected ? [{ check: 'etcd', problem: 'not watching etcd: this replica may be behind' }] : []),
    ],
  });
  const listening = await listenOrTakeOver(api, opts.port, opts.host, opts.handover);
  closers.push('API server', () => listening.close().then(() => closeApiServer(api, logger, opts.shutdownTimeoutMs ?? 10_000)));
  const { port } = listening;
  authenticator.start();
  if (authorizer instanceof ReloadingAuthorizer) authorizer.start();
  const url = `${tls ? 'https' : 'http'}://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  // Said before the replay, which may be long: where to find /livez and /readyz meanwhile.
  logger.info('listening', { url, port, pid: process.pid, storage: opts.storage ?? 'leveldb', dataDir, seq: log.lastSeq });
  const started = Date.now();
  // Values sealed by a KMS plugin read back only through it: the replay waits until every plugin answered (retried while /readyz shows kms-providers failing), as kube-apiserver waits.
  await log.ready();
  await store.start();
  replayed = true;
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
  const compactor = new RetentionTimer(store, {
    policy: opts.historyRetention ?? parseRetention(DEFAULT_RETENTION),
    intervalMs: opts.compactionIntervalMs ?? 60_000,
    onCompacted: (c) => logger.info('compacted', { horizon: c.horizon, kept: c.kept, ms: Math.round(c.ms) }),
    onError: (err) => logger.error('compaction failed', { error: err instanceof Error ? err.stack : String(err) }),
  });
  compactor.start();
  closers.push('compactor', () => compactor.stop());
  if (log.corrupt.size > 0) {
    const keys = [...log.corrupt.entries()].slice(0, 10).map(([key, c]) => `${key}: ${c.message}`);
    logger.warn('stored objects that cannot be read (corrupt objects)', { count: log.corrupt.size, first: keys });
  }
  logger.info('ready', { url, seq: store.appliedSeq, objects: store.view.size, replayMs: Date.now() - started, ...store.startedFrom });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
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

/**
 * The log: LevelDB, wrapped by encryption at rest (built first, so an unsupported provider such as
 * kms v1 stops the start), and the reloader of its configuration file when asked for.
 */
async function encryptedLog(opts: ServeOptions, logger: Logger, metrics: Metrics) {
  const encryption = opts.config?.encryption;
  const providerOptions: ProviderOptions = {
    ...(opts.kmsTimings ? { kmsTimings: opts.kmsTimings } : {}),
    onKmsHealth: (name, problem) => (problem === undefined ? logger.info('kms plugin healthy', { name }) : logger.error('kms plugin failed health check probe (retried)', { name, problem })),
  };
  const onBatch = (size: number, ms: number) => metrics.logBatch(size, ms);
  const onRequest = (operation: string, type: string, seconds: number) => metrics.etcdRequest(operation, type, seconds);
  // Each backend's client (etcd3 and gRPC, LevelDB) is loaded only by a server that uses it.
  const etcdLog = opts.etcd
    ? new (await import('./log/etcd/etcd-log.js')).EtcdLog({ servers: opts.etcd.servers, dir: join(opts.dataDir ?? '', 'etcd'), onBatch, onRequest, ...(await etcdCredentials(opts.etcd)) })
    : undefined;
  const log = encryptAtRest(
    etcdLog ?? (opts.storage === 'memory' ? new MemoryLog({ onBatch }) : new (await import('./log/leveldb-log.js')).LevelDbLog({ path: join(opts.dataDir ?? '', 'log'), onBatch })),
    encryption?.value,
    providerOptions,
  );
  const encryptionReloader =
    encryption && opts.encryptionConfigAutomaticReload
      ? new ConfigReloader(log.providers, {
          ...(await reloadableFile(encryption.file, encryptionDocument)),
          ...providerSwap(log, { providers: providerOptions }),
          ...(opts.encryptionReloadIntervalMs !== undefined ? { intervalMs: opts.encryptionReloadIntervalMs } : {}),
          ...reloadLog(logger, 'encryption', encryption.file),
          onOutcome: (status, atMs) => metrics.encryptionConfigReload(status, atMs),
        })
      : undefined;
  return { log, encryptionReloader, etcdLog };
}

/**
 * The authorizer chain, built once the store exists (the RBAC authorizer reads it) and before
 * anything listens: a connection file that cannot be read, a match condition that does not compile,
 * RBAC not available stop the start. Without a file, everything is allowed, as kube-apiserver's
 * default AlwaysAllow mode. The server's one RBAC authorizer goes into chainDeps (`rbac`), shared by
 * every chain a reload builds.
 */
async function authorizerFor(opts: ServeOptions, logger: Logger, egress: Egress, store: Store, closers: Closers) {
  const authorization = opts.config?.authorization;
  const rbacSource = new StoreRbacSource(store);
  closers.push('RBAC source', () => rbacSource.close());
  const chainDeps = { egress, rbac: rbacAuthorizer(rbacSource) };
  let initialChain;
  try {
    initialChain = buildAuthorizationChain(authorization?.value, chainDeps);
  } catch (err) {
    const file = authorization?.file ?? '--authorization-config';
    throw new Error(
      (err as Error).message
        .split('\n')
        .map((line) => `${file}: ${line}`)
        .join('\n'),
    );
  }
  const authorizer = authorization
    ? new ReloadingAuthorizer(initialChain, {
        ...(await reloadableFile(authorization.file, authorizationDocument)),
        deps: chainDeps,
        ...(opts.authorizationReloadIntervalMs !== undefined ? { intervalMs: opts.authorizationReloadIntervalMs } : {}),
        ...reloadLog(logger, 'authorization', authorization.file),
      })
    : initialChain;
  closers.push('authorizer', () => authorizer.close());
  // Escalation prevention only means something when RBAC decides: under AlwaysAllow nobody holds an RBAC grant.
  const escalationCheck = authorization?.value.authorizers.some((a) => a.type === 'RBAC') ? rbacEscalationCheck(rbacSource, authorizer) : undefined;
  return { authorizer, escalationCheck };
}
