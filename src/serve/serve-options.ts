import type { RetentionPolicy } from '../store/retention.js';
import type { ServerConfig } from '../config/server-config.js';
import type { EtcdFlags } from '../config/etcd-credentials.js';
import type { KmsTimings } from '../log/encryption/index.js';
import type { InflightLimits } from '../http/inflight.js';
import type { Logger } from '../observability/logger.js';
import type { FaultConfiguration } from '../config/faults.js';
import type { HandoverPort } from '../http/handover-port.js';

/** What serve() is asked to start: the `orchd serve` flags, or startOrchd's options, with the validated configuration files. */
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
  faults?: FaultConfiguration;
  /** A replay's port, listening, that its fork takes over once ready: held clients are never refused. */
  handover?: HandoverPort;
}

export type StorageKind = 'leveldb' | 'memory' | 'etcd';
