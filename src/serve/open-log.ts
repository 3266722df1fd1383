import { join } from 'node:path';
import { messageWithCause } from '../config/data-dir.js';
import { etcdCredentials } from '../config/etcd-credentials.js';
import { encryptionDocument } from '../config/encryption.js';
import { ConfigReloader, reloadableFile } from '../config/reloader.js';
import { MemoryLog } from '../log/memory-log.js';
import { LogError } from '../log/log.js';
import { encryptAtRest, providerSwap, type ProviderOptions } from '../log/encryption/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Closers } from './closers.js';
import type { ServeOptions } from './serve-options.js';
import { reloadLog } from './reload-log.js';

/**
 * The log, open: LevelDB in the data folder, memory, or etcd, wrapped by encryption at rest (built
 * first, so an unsupported provider such as kms v1 stops the start), and the reloader of its
 * configuration file when asked for (started once the log is replayed).
 */
export async function openLog(opts: ServeOptions, logger: Logger, metrics: Metrics, closers: Closers) {
  const opened = await encryptedLog(opts, logger, metrics);
  const { dataDir } = opts;
  await opened.log.open().catch((err: unknown) => {
    if (err instanceof LogError && err.code === 'LOCKED') {
      throw new Error(`data folder ${dataDir}: another orchd holds it (its log is locked: ${join(dataDir ?? '', 'log', 'LOCK')}); stop that one or choose another --data-dir`);
    }
    throw new Error(`data folder ${dataDir}: cannot open its log: ${messageWithCause(err)}`);
  });
  closers.push('log', () => opened.log.close());
  return opened;
}

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
    ? new (await import('../log/etcd/etcd-log.js')).EtcdLog({ servers: opts.etcd.servers, dir: join(opts.dataDir ?? '', 'etcd'), onBatch, onRequest, ...(await etcdCredentials(opts.etcd)) })
    : undefined;
  const log = encryptAtRest(
    etcdLog ?? (opts.storage === 'memory' ? new MemoryLog({ onBatch }) : new (await import('../log/leveldb-log.js')).LevelDbLog({ path: join(opts.dataDir ?? '', 'log'), onBatch })),
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
