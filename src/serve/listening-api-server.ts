import { readForkPoints } from '../config/fork-origin.js';
import { AuditFile } from '../http/audit-file.js';
import { closeApiServer, createApiServer, listenOrTakeOver, type ApiServerOptions } from '../http/server.js';
import type { EncryptedLog } from '../log/encryption/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Closers } from './closers.js';
import type { ServeOptions } from './serve-options.js';

/** What the API server is built from that an earlier step made. */
export interface ApiServerParts extends Pick<ApiServerOptions, 'objects' | 'kinds' | 'authenticator' | 'authorizer'> {
  metrics: Metrics;
  logger: Logger;
  log: EncryptedLog;
  /** Set on etcd: its connection is a health check, and a fork's points are not in this data folder. */
  etcd: { readonly connected: boolean } | undefined;
  tls: { cert: Buffer; key: Buffer } | undefined;
}

/**
 * The HTTP server, listening at once (so /livez and /readyz answer during a long replay) but serving
 * resource requests only from api.start(); closed by stopping to accept, then letting requests in
 * flight finish within the shutdown timeout.
 */
export async function listeningApiServer(opts: ServeOptions, parts: ApiServerParts, closers: Closers) {
  const { dataDir } = opts;
  const { log, etcd, logger } = parts;
  const api = createApiServer({
    faults: { config: opts.faults, now: opts.now, dataDir: opts.storage === 'leveldb' || !opts.storage ? dataDir : undefined },
    audit: opts.auditLogPath === undefined ? undefined : AuditFile.open(opts.auditLogPath, opts.config?.auditPolicy?.value),
    kinds: parts.kinds,
    objects: parts.objects,
    metrics: parts.metrics,
    logger,
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    watchLimits: {
      ...(opts.watchBuffer !== undefined ? { maxBuffered: opts.watchBuffer } : {}),
      ...(opts.watchStallTimeoutMs !== undefined ? { stallTimeoutMs: opts.watchStallTimeoutMs } : {}),
    },
    authenticator: parts.authenticator,
    ...(parts.authorizer ? { authorizer: parts.authorizer } : {}),
    ...(parts.tls ? { tls: parts.tls } : {}),
    ...(opts.inflight ? { inflight: opts.inflight } : {}),
    ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    ...(opts.headersTimeoutMs !== undefined ? { headersTimeoutMs: opts.headersTimeoutMs } : {}),
    // A folder made by `orchd fork`: its log holds its source's history up to the fork point.
    forks: dataDir !== undefined && !etcd ? await readForkPoints(dataDir) : [],
    healthChecks: () => [
      ...log.health().map((h) => ({ check: 'kms-providers', problem: h.problem })),
      ...(etcd && !etcd.connected ? [{ check: 'etcd', problem: 'not watching etcd: this replica may be behind' }] : []),
    ],
  });
  const listening = await listenOrTakeOver(api, opts.port, opts.host, opts.handover);
  closers.push('API server', () => listening.close().then(() => closeApiServer(api, logger, opts.shutdownTimeoutMs ?? 10_000)));
  const { host } = opts;
  const url = `${parts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${listening.port}`;
  return { api, listening, url };
}
