/**
 * `orchd serve`: its flag table (which writes its usage) and the server's process: the configuration
 * files checked before anything starts, then serve.ts, stopped by SIGTERM or SIGINT.
 */
import { parseDuration } from '../config/duration.js';
import { DEFAULT_RETENTION, parseRetention } from '../config/retention.js';
import { DEFAULT_INFLIGHT_LIMITS } from '../http/inflight.js';
import { jsonLogger } from '../observability/logger.js';
// serve.js (the whole server), the configuration files' loader (its checks, CEL's tokens) and YAML
// are loaded only when the server starts: `orchd serve --help` and a bad flag need none of it.
import type { ServeOptions, Running } from '../serve.js';
import type { ServerConfig, ServerConfigFiles } from '../config/server-config.js';
import { command, nonEmpty, oneOf, portNumber, UsageError, type Flags, type Values } from './flags.js';

/** Past the shutdown timeout plus this, a shutdown that still has not finished gives up. */
const SHUTDOWN_LIMIT_EXTRA_MS = 30_000;

function durationMs(text: string): number {
  let seconds: number;
  try {
    seconds = parseDuration(text);
  } catch {
    throw new Error(`${JSON.stringify(text)} is not a duration (e.g. 10s, 1m, 1h)`);
  }
  return seconds * 1000;
}

function positiveDurationMs(text: string): number {
  const ms = durationMs(text);
  if (ms <= 0) throw new Error('must be more than 0');
  return ms;
}

/** A count of requests: a whole number, 0 for no limit. */
function requestCount(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a whole number (0: no limit)`);
  return Number(text);
}

/** A byte count of at least 1Ki: digits with an optional binary suffix (Ki, Mi, Gi), as Kubernetes quantities write them. */
function watchBufferBytes(text: string): number {
  const m = /^(\d{1,12})(Ki|Mi|Gi)?$/.exec(text);
  const bytes = m ? Number(m[1]) * { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? '']! : 0;
  if (bytes < 1024) throw new Error(`${JSON.stringify(text)} is not a size of at least 1Ki (e.g. 4Mi, 512Ki, 1048576)`);
  return bytes;
}

function etcdServers(text: string): string[] {
  if (text === '') throw new Error('must not be empty (e.g. http://127.0.0.1:2379)');
  const urls = text.split(',');
  urls.forEach((u, i) => {
    if (!/^https?:\/\/[^/\s]+:\d{1,5}\/?$/.test(u)) throw new Error(`[${i}] ${JSON.stringify(u)} is not an etcd client URL (http://host:port)`);
  });
  return urls;
}

const FLAGS = {
  port: { value: 'PORT', default: '8080', help: 'TCP port to listen on (0 picks a free one)', parse: portNumber },
  'bind-address': { value: 'ADDRESS', default: '127.0.0.1', help: 'address to listen on', parse: nonEmpty },
  'data-dir': { value: 'DIR', help: 'folder of the LevelDB log (default ./data; with --storage memory, none unless given)', parse: nonEmpty },
  storage: {
    value: 'KIND',
    default: 'leveldb',
    help: "where the log is: leveldb (in --data-dir), memory (gone when orchd stops; nothing is written to disk unless --data-dir is given) or etcd (shared by every replica on the same etcd; --data-dir then holds this replica's checkpoints)",
    parse: oneOf('leveldb', 'memory', 'etcd'),
  },
  'etcd-servers': { value: 'URLS', help: 'with --storage etcd: etcd client URLs, comma-separated (http://127.0.0.1:2379,http://127.0.0.1:22379)', parse: etcdServers },
  'etcd-cafile': { value: 'FILE', help: "with --etcd-servers https://…: the CA (PEM) etcd's certificate is checked against", parse: nonEmpty },
  'etcd-certfile': { value: 'FILE', help: "with --etcd-servers https://…: this client's certificate (PEM), for etcd's --client-cert-auth", parse: nonEmpty },
  'etcd-keyfile': { value: 'FILE', help: 'the key (PEM) of --etcd-certfile', parse: nonEmpty },
  'etcd-username': { value: 'NAME', help: "with etcd's auth enabled: the etcd user orchd writes as (its password in --etcd-password-file)", parse: nonEmpty },
  'etcd-password-file': { value: 'FILE', help: 'the file holding the password of --etcd-username', parse: nonEmpty },
  'event-ttl': { value: 'DURATION', default: '1h', help: 'how long Events are kept after their last write', parse: durationMs },
  'history-retention': {
    value: 'LIMITS',
    default: DEFAULT_RETENTION,
    help: 'how much past the log keeps for reads at old versions, continues and watches: a duration (24h), an entry count (100000), both (24h,100000: whichever drops more), or none; current objects are never dropped',
    parse: parseRetention,
  },
  'shutdown-timeout': { value: 'DURATION', default: '10s', help: 'how long a shutdown waits for requests in flight before it closes their connections', parse: durationMs },
  'watch-buffer': { value: 'SIZE', default: '4Mi', help: 'bytes a watcher may have unsent before it stops getting live events and catches up from the log (512Ki, 4Mi)', parse: watchBufferBytes },
  'watch-stall-timeout': { value: 'DURATION', default: '60s', help: 'how long a watcher that is behind may go without reading before it is ended with an ERROR event', parse: positiveDurationMs },
  'max-requests-inflight': {
    value: 'N',
    default: String(DEFAULT_INFLIGHT_LIMITS.maxRequestsInflight),
    help: 'read-only requests (get, list) served at once; past it a request is answered 429 with Retry-After (watches are not counted; 0: no limit)',
    parse: requestCount,
  },
  'max-mutating-requests-inflight': { value: 'N', default: String(DEFAULT_INFLIGHT_LIMITS.maxMutatingRequestsInflight), help: 'the same for writes (0: no limit)', parse: requestCount },
  'request-timeout': { value: 'DURATION', default: '1m0s', help: "how long a request's headers and body may take to arrive (headers: at most 32s, as kube-apiserver)", parse: positiveDurationMs },
  'authentication-config': {
    value: 'FILE',
    help: 'AuthenticationConfiguration: JWT authenticators, anonymous (with it, orchd serves HTTPS; without a certificate it makes a self-signed one in the data folder, apiserver.crt)',
  },
  'authorization-config': { value: 'FILE', help: 'AuthorizationConfiguration: the authorizer chain (without it, every request is allowed)' },
  'encryption-provider-config': { value: 'FILE', help: 'EncryptionConfiguration: encryption at rest (aesgcm, aescbc, secretbox, identity, kms v2 plugins on unix sockets)' },
  'encryption-provider-config-automatic-reload': {
    help: 're-read that file every minute: a valid new configuration replaces the providers (its KMS plugins must answer first); an invalid one is logged and the last good one kept',
  },
  'egress-selector-config-file': { value: 'FILE', help: 'EgressSelectorConfiguration: outbound connections' },
  'tracing-config-file': { value: 'FILE', help: 'TracingConfiguration: span export' },
  'admission-control-config-file': { value: 'FILE', help: 'AdmissionConfiguration: admission plugin settings' },
  'audit-log-path': {
    value: 'FILE',
    help: 'append an audit log there (- for stdout): one audit.k8s.io Event per request, as JSON lines (verb, user, object, answer, admission annotations)',
    parse: nonEmpty,
  },
  'audit-policy-file': { value: 'FILE', help: 'Policy (audit.orch.io/v1): which requests the audit log records, at None or Metadata level (default: every request at Metadata)' },
  'tls-cert-file': { value: 'FILE', help: 'serving certificate (PEM), with --tls-private-key-file' },
  'tls-private-key-file': { value: 'FILE', help: "the serving certificate's key (PEM)" },
  faults: {
    value: 'FILE',
    help: "FaultConfiguration (apiserver.config.orch.io/v1alpha1): faults injected on demand, from a seed, for controllers' tests; GET|PUT|DELETE /debug/faults reads, replaces and clears them",
  },
} as const satisfies Flags;

const NOTES = `Server configuration files (YAML or JSON). Each given file is read and validated before anything
else; one that breaks a rule stops the server with every error and its field path.
Enforced: authentication and authorization (both reloaded every minute), encryption at rest, TLS,
egress selection, tracing, the admission configuration and the audit policy.

Logs are JSON lines on stderr. SIGTERM or SIGINT stops taking requests, finishes the writes in
flight, ends watches, saves a checkpoint and exits 0; a second signal exits at once with 1.`;

/** The options of serve() the flags give, checked together where one flag needs another. */
export function serveOptions(v: Values<typeof FLAGS>): Omit<ServeOptions, 'logger' | 'config' | 'faults'> & { configFiles: ServerConfigFiles; faultsFile?: string } {
  if (v.storage === 'etcd' && v['etcd-servers'] === undefined) throw new UsageError('--storage etcd needs --etcd-servers (e.g. http://127.0.0.1:2379)');
  if (v.storage !== 'etcd' && v['etcd-servers'] !== undefined) throw new UsageError('--etcd-servers must be set with --storage etcd');
  const etcdTls = { caFile: v['etcd-cafile'], certFile: v['etcd-certfile'], keyFile: v['etcd-keyfile'] };
  const given = {
    'etcd-cafile': etcdTls.caFile,
    'etcd-certfile': etcdTls.certFile,
    'etcd-keyfile': etcdTls.keyFile,
    'etcd-username': v['etcd-username'],
    'etcd-password-file': v['etcd-password-file'],
  };
  const etcdFlags = Object.keys(given).filter((f) => given[f as keyof typeof given] !== undefined);
  const anyTls = etcdTls.caFile !== undefined || etcdTls.certFile !== undefined;
  if (v['etcd-servers'] === undefined && etcdFlags.length > 0) throw new UsageError(`--${etcdFlags[0]} must be set with --etcd-servers`);
  if ((etcdTls.certFile === undefined) !== (etcdTls.keyFile === undefined)) throw new UsageError('--etcd-certfile and --etcd-keyfile go together');
  if ((v['etcd-username'] === undefined) !== (v['etcd-password-file'] === undefined)) throw new UsageError('--etcd-username and --etcd-password-file go together');
  if (v['audit-policy-file'] !== undefined && v['audit-log-path'] === undefined) throw new UsageError('--audit-policy-file needs --audit-log-path: the policy says what the audit log records');
  if (v['encryption-provider-config-automatic-reload'] && v['encryption-provider-config'] === undefined) {
    throw new UsageError('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  }
  return {
    port: v.port,
    host: v['bind-address'],
    // Memory storage touches no disk unless a folder is asked for (its continue-token key, a certificate).
    dataDir: v['data-dir'] ?? (v.storage === 'memory' ? undefined : './data'),
    storage: v.storage,
    eventTtlSeconds: v['event-ttl'] / 1000,
    shutdownTimeoutMs: v['shutdown-timeout'],
    historyRetention: v['history-retention'],
    watchBuffer: v['watch-buffer'],
    watchStallTimeoutMs: v['watch-stall-timeout'],
    inflight: { maxRequestsInflight: v['max-requests-inflight'], maxMutatingRequestsInflight: v['max-mutating-requests-inflight'] },
    requestTimeoutMs: v['request-timeout'],
    encryptionConfigAutomaticReload: v['encryption-provider-config-automatic-reload'],
    ...(v['etcd-servers']
      ? {
          etcd: {
            servers: v['etcd-servers'],
            ...(anyTls ? { tls: etcdTls } : {}),
            ...(v['etcd-username'] !== undefined && v['etcd-password-file'] !== undefined ? { auth: { username: v['etcd-username'], passwordFile: v['etcd-password-file'] } } : {}),
          },
        }
      : {}),
    ...(v['audit-log-path'] !== undefined ? { auditLogPath: v['audit-log-path'] } : {}),
    ...(v.faults !== undefined ? { faultsFile: v.faults } : {}),
    configFiles: {
      authentication: v['authentication-config'],
      authorization: v['authorization-config'],
      encryption: v['encryption-provider-config'],
      egressSelector: v['egress-selector-config-file'],
      tracing: v['tracing-config-file'],
      admission: v['admission-control-config-file'],
      auditPolicy: v['audit-policy-file'],
      tlsCertFile: v['tls-cert-file'],
      tlsPrivateKeyFile: v['tls-private-key-file'],
    },
  };
}

export const serveCommand = command({
  name: 'serve',
  summary: 'Serve the orch.io API over HTTP(S) on 127.0.0.1, with its log in a data folder (LevelDB), in memory or on etcd.',
  flags: FLAGS,
  notes: NOTES,
  async run({ values }, io) {
    const { configFiles, faultsFile, ...options } = serveOptions(values);
    // Before the data folder is opened or a port taken: a bad file must leave nothing half-started.
    const { loadServerConfig } = await import('../config/server-config.js');
    const { problemLine } = await import('../config/load.js');
    const loaded = loadServerConfig(configFiles);
    if (!loaded.ok) {
      io.err.write(loaded.problems.map((p) => `${problemLine(p)}\n`).join(''));
      io.err.write(`orchd: ${loaded.problems.length} error(s) in the configuration files; not starting\n`);
      return 1;
    }
    let faults;
    if (faultsFile !== undefined) {
      const read = (await import('../config/faults.js')).loadFaultFile(faultsFile);
      if (!read.ok) {
        io.err.write(`${read.message}\norchd: the fault configuration is invalid; not starting\n`);
        return 1;
      }
      faults = read.value;
    }
    await runServer({ ...options, ...(faults ? { faults } : {}) }, loaded.config);
    // Serving goes on until a signal ends the process.
    return new Promise<number>(() => undefined);
  },
});

async function runServer(options: Omit<ServeOptions, 'logger' | 'config'>, config: ServerConfig): Promise<void> {
  const logger = jsonLogger();
  let server: Running | undefined;
  let stopping = false;
  // Installed before the replay: a signal during a long replay must not wait for it. Nothing is
  // written until the views are rebuilt, so stopping then loses nothing.
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('shutting down', { signal });
    if (!server) process.exit(0);
    const limitMs = (options.shutdownTimeoutMs ?? 0) + SHUTDOWN_LIMIT_EXTRA_MS;
    setTimeout(() => {
      logger.error('shutdown did not finish in time: exiting', { limitMs });
      process.exit(1);
    }, limitMs).unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: err instanceof Error ? err.stack : String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const { serve } = await import('../serve.js');
  server = await serve({ ...options, logger, config });
}
