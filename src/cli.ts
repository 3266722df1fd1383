#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { jsonLogger } from './observability/logger.js';
import { parseDuration } from './config/duration.js';
import type { ServerConfig, ServerConfigFiles } from './config/server-config.js';
// serve.js (the whole server), the configuration files' loader (its checks, CEL's tokens) and YAML
// are loaded only by the commands that use them: a time-travel command starts without them.
import type { Running, StorageKind } from './serve.js';
import type { RetentionPolicy } from './store/retention.js';
import { DEFAULT_RETENTION, parseRetention } from './config/retention.js';
import { DEFAULT_INFLIGHT_LIMITS, type InflightLimits } from './http/inflight.js';

const usage = `usage: orchd serve [--port 8080] [--bind-address 127.0.0.1] [--data-dir ./data] [--event-ttl 1h]
       orchd kubeconfig [--server http://127.0.0.1:8080] [--certificate-authority FILE] [--token TOKEN]

  --port           TCP port to listen on (0 picks a free one)          default 8080
  --bind-address   address to listen on                                 default 127.0.0.1
  --data-dir       folder of the LevelDB log                            default ./data
  --storage        where the log is: leveldb (in --data-dir), memory (gone
                   when orchd stops; nothing is written to disk unless
                   --data-dir is given) or etcd (shared by every replica
                   on the same etcd; --data-dir then holds this
                   replica's checkpoints)                               default leveldb
  --etcd-servers   with --storage etcd: etcd client URLs, comma-separated
                   (http://127.0.0.1:2379,http://127.0.0.1:22379)
  --event-ttl      how long Events are kept after their last write      default 1h
  --history-retention  how much past the log keeps for reads at old versions,
                   continues and watches: a duration (24h), an entry count
                   (100000), both (24h,100000: whichever drops more), or none;
                   current objects are never dropped                    default ${DEFAULT_RETENTION}
  --shutdown-timeout  how long a shutdown waits for requests in flight
                   before it closes their connections                   default 10s
  --watch-buffer   bytes a watcher may have unsent before it stops getting
                   live events and catches up from the log (512Ki, 4Mi)  default 4Mi
  --watch-stall-timeout  how long a watcher that is behind may go without
                   reading before it is ended with an ERROR event        default 60s
  --max-requests-inflight  read-only requests (get, list) served at once;
                   past it a request is answered 429 with Retry-After
                   (watches are not counted; 0: no limit)               default 400
  --max-mutating-requests-inflight  the same for writes (0: no limit)    default 200
  --request-timeout  how long a request's headers and body may take to
                   arrive (headers: at most 32s, as kube-apiserver)     default 1m0s
  -h, --help       print this and exit

Server configuration files (YAML or JSON). Each given file is read and validated before anything
else; one that breaks a rule stops the server with every error and its field path.
Enforced: authentication and authorization (both reloaded every minute), encryption at rest, TLS,
egress selection, tracing and the admission configuration.
  --authentication-config FILE          AuthenticationConfiguration: JWT authenticators, anonymous
                                        (with it, orchd serves HTTPS; without a certificate it makes
                                        a self-signed one in the data folder, apiserver.crt)
  --authorization-config FILE           AuthorizationConfiguration: the authorizer chain
                                        (without it, every request is allowed)
  --encryption-provider-config FILE     EncryptionConfiguration: encryption at rest (aesgcm, aescbc,
                                        secretbox, identity, kms v2 plugins on unix sockets)
  --encryption-provider-config-automatic-reload
                                        re-read that file every minute: a valid new configuration
                                        replaces the providers (its KMS plugins must answer first);
                                        an invalid one is logged and the last good one kept
  --egress-selector-config-file FILE    EgressSelectorConfiguration: outbound connections
  --tracing-config-file FILE            TracingConfiguration: span export
  --admission-control-config-file FILE  AdmissionConfiguration: admission plugin settings
  --tls-cert-file FILE, --tls-private-key-file FILE   serving certificate and its key (PEM)

orchd kubeconfig prints a kubeconfig (YAML) for kubectl and other clients of the server at --server:
  orchd kubeconfig --server http://127.0.0.1:8080 > kc.yaml && kubectl --kubeconfig kc.yaml get namespaces
  --certificate-authority FILE   PEM to trust for an https server (its data folder's apiserver.crt
                                 when it made a self-signed one)
  --token TOKEN                  a bearer token its authentication accepts

Time travel through the log (a data folder or a running server): orchd log, state, diff, history,
export and replay; \`orchd log --help\` says how.

Logs are JSON lines on stderr. SIGTERM or SIGINT stops taking requests, finishes the writes in
flight, ends watches, saves a checkpoint and exits 0; a second signal exits at once with 1.
`;

/** The time-travel subcommands (tools/timetravel): log, state, diff, history, export, replay. */
const TIME_TRAVEL = new Set(['log', 'state', 'diff', 'history', 'export', 'replay']);

/** A mistake in the command line: said on stderr, with exit status 2 as usage errors have. */
class UsageError extends Error {}

/** Past the shutdown timeout plus this, a shutdown that still has not finished gives up. */
const SHUTDOWN_LIMIT_EXTRA_MS = 30_000;

interface ServeFlags {
  port: number;
  host: string;
  dataDir: string | undefined;
  storage: StorageKind;
  eventTtlSeconds: number;
  shutdownTimeoutMs: number;
  historyRetention: RetentionPolicy;
  watchBuffer: number;
  watchStallTimeoutMs: number;
  inflight: InflightLimits;
  requestTimeoutMs: number;
  configFiles: ServerConfigFiles;
  encryptionConfigAutomaticReload: boolean;
  etcd?: { servers: string[] };
}

/** The flags of `orchd serve`, each checked with a message naming it. Long: one check per flag, in the order of the usage text. */
function parseServeFlags(args: string[]): ServeFlags | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string', default: '8080' },
        'bind-address': { type: 'string', default: '127.0.0.1' },
        storage: { type: 'string', default: 'leveldb' },
        'data-dir': { type: 'string' },
        'etcd-servers': { type: 'string' },
        'event-ttl': { type: 'string', default: '1h' },
        'shutdown-timeout': { type: 'string', default: '10s' },
        'history-retention': { type: 'string', default: DEFAULT_RETENTION },
        'watch-buffer': { type: 'string', default: '4Mi' },
        'watch-stall-timeout': { type: 'string', default: '60s' },
        'max-requests-inflight': { type: 'string', default: String(DEFAULT_INFLIGHT_LIMITS.maxRequestsInflight) },
        'max-mutating-requests-inflight': { type: 'string', default: String(DEFAULT_INFLIGHT_LIMITS.maxMutatingRequestsInflight) },
        'request-timeout': { type: 'string', default: '1m0s' },
        'authentication-config': { type: 'string' },
        'authorization-config': { type: 'string' },
        'encryption-provider-config': { type: 'string' },
        'encryption-provider-config-automatic-reload': { type: 'boolean', default: false },
        'egress-selector-config-file': { type: 'string' },
        'tracing-config-file': { type: 'string' },
        'admission-control-config-file': { type: 'string' },
        'tls-cert-file': { type: 'string' },
        'tls-private-key-file': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) return 'help';
  if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new UsageError(`--port: ${JSON.stringify(values.port)} is not a port number (0-65535)`);
  if (values['bind-address'] === '') throw new UsageError('--bind-address: must not be empty');
  if (values['data-dir'] === '') throw new UsageError('--data-dir: must not be empty');
  const storage = values.storage;
  if (storage !== 'leveldb' && storage !== 'memory' && storage !== 'etcd') throw new UsageError(`--storage: ${JSON.stringify(storage)} is not one of leveldb, memory, etcd`);
  const etcd = etcdFlags(storage, values['etcd-servers']);
  let eventTtlSeconds: number;
  try {
    eventTtlSeconds = parseDuration(values['event-ttl']);
  } catch {
    throw new UsageError(`--event-ttl: ${JSON.stringify(values['event-ttl'])} is not a duration (e.g. 1h, 30m, 90s)`);
  }
  let shutdownTimeoutMs: number;
  try {
    shutdownTimeoutMs = parseDuration(values['shutdown-timeout']) * 1000;
  } catch {
    throw new UsageError(`--shutdown-timeout: ${JSON.stringify(values['shutdown-timeout'])} is not a duration (e.g. 10s, 1m)`);
  }
  let historyRetention: RetentionPolicy;
  try {
    historyRetention = parseRetention(values['history-retention']);
  } catch (err) {
    throw new UsageError(`--history-retention: ${err instanceof Error ? err.message : String(err)}`);
  }
  const watchBuffer = parseBytes(values['watch-buffer']);
  if (watchBuffer === undefined || watchBuffer < 1024) throw new UsageError(`--watch-buffer: ${JSON.stringify(values['watch-buffer'])} is not a size of at least 1Ki (e.g. 4Mi, 512Ki, 1048576)`);
  let watchStallTimeoutMs: number;
  try {
    watchStallTimeoutMs = parseDuration(values['watch-stall-timeout']) * 1000;
  } catch {
    throw new UsageError(`--watch-stall-timeout: ${JSON.stringify(values['watch-stall-timeout'])} is not a duration (e.g. 60s, 2m)`);
  }
  if (watchStallTimeoutMs <= 0) throw new UsageError('--watch-stall-timeout: must be more than 0');
  const inflight = { maxRequestsInflight: count('--max-requests-inflight', values['max-requests-inflight']), maxMutatingRequestsInflight: count('--max-mutating-requests-inflight', values['max-mutating-requests-inflight']) };
  let requestTimeoutMs: number;
  try {
    requestTimeoutMs = parseDuration(values['request-timeout']) * 1000;
  } catch {
    throw new UsageError(`--request-timeout: ${JSON.stringify(values['request-timeout'])} is not a duration (e.g. 60s, 1m)`);
  }
  if (requestTimeoutMs <= 0) throw new UsageError('--request-timeout: must be more than 0');
  const encryptionConfigAutomaticReload = values['encryption-provider-config-automatic-reload'];
  if (encryptionConfigAutomaticReload && values['encryption-provider-config'] === undefined) {
    throw new UsageError('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  }
  const configFiles: ServerConfigFiles = {
    authentication: values['authentication-config'],
    authorization: values['authorization-config'],
    encryption: values['encryption-provider-config'],
    egressSelector: values['egress-selector-config-file'],
    tracing: values['tracing-config-file'],
    admission: values['admission-control-config-file'],
    tlsCertFile: values['tls-cert-file'],
    tlsPrivateKeyFile: values['tls-private-key-file'],
  };
  return {
    port: Number(values.port),
    host: values['bind-address'],
    // Memory storage touches no disk unless a folder is asked for (its continue-token key, a certificate).
    dataDir: values['data-dir'] ?? (storage === 'memory' ? undefined : './data'),
    storage,
    eventTtlSeconds,
    shutdownTimeoutMs,
    historyRetention,
    watchBuffer,
    watchStallTimeoutMs,
    inflight,
    requestTimeoutMs,
    configFiles,
    encryptionConfigAutomaticReload,
    ...(etcd ? { etcd } : {}),
  };
}

/** --storage etcd and its --etcd-servers, checked together. */
function etcdFlags(storage: StorageKind, servers: string | undefined): { servers: string[] } | undefined {
  if (storage !== 'etcd') {
    if (servers !== undefined) throw new UsageError('--etcd-servers must be set with --storage etcd');
    return undefined;
  }
  if (servers === undefined || servers === '') throw new UsageError('--storage etcd needs --etcd-servers (e.g. http://127.0.0.1:2379)');
  const urls = servers.split(',');
  urls.forEach((u, i) => {
    if (!/^https?:\/\/[^/\s]+:\d{1,5}\/?$/.test(u)) throw new UsageError(`--etcd-servers[${i}]: ${JSON.stringify(u)} is not an etcd client URL (http://host:port)`);
  });
  return { servers: urls };
}

/** A count of requests: a whole number, 0 for no limit. */
function count(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a whole number (0: no limit)`);
  return Number(text);
}

/** A byte count: digits with an optional binary suffix (Ki, Mi, Gi), as Kubernetes quantities write them. */
function parseBytes(text: string): number | undefined {
  const m = /^(\d{1,12})(Ki|Mi|Gi)?$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? '']!;
}

async function runServe(flags: ServeFlags, config: ServerConfig): Promise<void> {
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
    const limitMs = flags.shutdownTimeoutMs + SHUTDOWN_LIMIT_EXTRA_MS;
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
  const { serve } = await import('./serve.js');
  server = await serve({ ...flags, logger, config });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage);
    return;
  }
  if (command === 'kubeconfig') return printKubeconfig(rest);
  // Loaded only when asked for: serving needs none of it.
  if (TIME_TRAVEL.has(command)) return void (process.exitCode = await (await import('../tools/timetravel/commands.js')).runTimeTravel(command, rest));
  if (command !== 'serve') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const flags = parseServeFlags(rest);
  if (flags === 'help') {
    process.stdout.write(usage);
    return;
  }
  // Before the data folder is opened or a port taken: a bad file must leave nothing half-started.
  const { loadServerConfig } = await import('./config/server-config.js');
  const { problemLine } = await import('./config/load.js');
  const loaded = loadServerConfig(flags.configFiles);
  if (!loaded.ok) {
    process.stderr.write(loaded.problems.map((p) => `${problemLine(p)}\n`).join(''));
    process.stderr.write(`orchd: ${loaded.problems.length} error(s) in the configuration files; not starting\n`);
    process.exit(1);
  }
  await runServe(flags, loaded.config);
}

/** `orchd kubeconfig`: a kubeconfig for the server at --server, on stdout. */
async function printKubeconfig(args: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        server: { type: 'string', default: 'http://127.0.0.1:8080' },
        'certificate-authority': { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const server = values.server;
  if (!/^https?:\/\/[^/\s]+\/?$/.test(server)) throw new UsageError(`--server: ${JSON.stringify(server)} is not a server URL (http://host:port or https://host:port)`);
  const caFile = values['certificate-authority'];
  const certificateAuthority = caFile === undefined ? undefined : await readFile(caFile).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`--certificate-authority: ${caFile}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  const { kubeconfigYaml } = await import('./config/kubeconfig-yaml.js');
  process.stdout.write(kubeconfigYaml({ server: server.replace(/\/$/, ''), certificateAuthority, token: values.token }));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`orchd: ${err.message}\nRun 'orchd --help' for usage.\n`);
    process.exit(2);
  }
  process.stderr.write(`orchd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
