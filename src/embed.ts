/**
 * orchd inside a test process: startOrchd() runs the whole server (serve.ts) on a loopback port, on a
 * memory log by default, and hands back what a controller's tests need — a client configuration, the
 * history the log keeps, and a reset between tests that takes milliseconds instead of a restart.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { problemLine } from './config/load.js';
import { loadServerConfig, type ServerConfigFiles } from './config/server-config.js';
import { baselineOf, resetTo } from './store/reset.js';
import { historyOf, resolveKind, stateAt, type HistoryEntry } from './store/history.js';
import { SELF_SIGNED_CERT_FILE } from './http/tls.js';
import { kubeconfigYaml } from './config/kubeconfig-yaml.js';
import { silentLogger, type Logger } from './observability/logger.js';
import type { KubeObject } from './resources/types.js';
import { serve, type StorageKind } from './serve.js';

/** A configuration file's content as an object (as its YAML would parse), or the path of the file. */
export type ConfigDocument = string | Record<string, unknown>;

/** The server configuration files of `orchd serve` (spec/server-config.md), by the flag they go with. */
export interface OrchdConfig {
  /** --authentication-config: an AuthenticationConfiguration (with it, orchd serves HTTPS). */
  authentication?: ConfigDocument;
  /** --authorization-config: an AuthorizationConfiguration. */
  authorization?: ConfigDocument;
  /** --encryption-provider-config: an EncryptionConfiguration. */
  encryption?: ConfigDocument;
  /** --egress-selector-config-file: an EgressSelectorConfiguration. */
  egressSelector?: ConfigDocument;
  /** --tracing-config-file: a TracingConfiguration. */
  tracing?: ConfigDocument;
  /** --admission-control-config-file: an AdmissionConfiguration. */
  admission?: ConfigDocument;
  /** --tls-cert-file and --tls-private-key-file: paths of the serving certificate (PEM) and its key. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
}

export interface StartOrchdOptions {
  /** Where the log lives: 'memory' (the default without dataDir) or 'leveldb' in dataDir (the default with it). */
  storage?: StorageKind;
  /** The data folder: the LevelDB log (kept across starts), the continue-token key, a self-signed certificate. */
  dataDir?: string;
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  config?: OrchdConfig;
  /** The clock of creation and deletion timestamps and of history retention (ms since the epoch); default Date.now. */
  now?: () => number;
  /** Where the server's log lines go; default nowhere. */
  logger?: Logger;
  /** How long Events are kept after their last write; default 3600. */
  eventTtlSeconds?: number;
}

export interface Orchd {
  /** http://127.0.0.1:<port> (https with TLS configured). */
  readonly url: string;
  readonly port: number;
  /** The newest resourceVersion the server has applied (a list's resourceVersion now). */
  readonly resourceVersion: string;
  /** A @kubernetes/client-node KubeConfig for this server (client-node must be installed: an optional peer dependency). */
  kubeConfig(): KubeConfig;
  /** A kubeconfig file (YAML) for this server, for kubectl and other clients. */
  kubeconfig(options?: { token?: string }): string;
  /**
   * Every version of one object still in the log, oldest first, deletes included. resource: a
   * resource (`events`, `roles.rbac.orch.io`), a kind (`Event`) or an apiVersion that serves one
   * kind (`events.orch.io/v1`); namespace is ignored for cluster-scoped resources.
   */
  history(resource: string, namespace: string | undefined, name: string): Promise<HistoryEntry[]>;
  /** Every object at a resourceVersion (default: now), as the log had them; 410-style error when compacted. */
  state(at?: string | number): Promise<KubeObject[]>;
  /** Resolves once the server has applied resourceVersion rv; rejects after timeoutMs (default 10 s). */
  waitForVersion(rv: string | number, timeoutMs?: number): Promise<void>;
  /**
   * Back to the state this start left the server in (on memory: the system namespaces and bootstrap
   * RBAC; on a LevelDB folder, also what its log held), in place: watches end (clients relist),
   * objects written since are deleted, the log and views keep no trace of them, and the objects
   * that stay keep only their current version. resourceVersions go on rising.
   */
  reset(): Promise<void>;
  /** Ends watches, lets requests in flight finish, closes the log; again, the same promise. */
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);

/**
 * client-node, loaded on the first kubeConfig(): synchronously (Node ≥ 20.19 requires ES modules), so
 * kubeConfig() needs no await and a start does not pay for loading it (half a second) when the
 * tests never ask for it. A controller under test has it loaded already; require then finds it.
 */
function clientNode(): typeof import('@kubernetes/client-node') {
  try {
    return require('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`kubeConfig() needs @kubernetes/client-node installed beside orchd (npm install @kubernetes/client-node) and Node ≥ 20.19 to load it: ${why}`);
  }
}

export async function startOrchd(options: StartOrchdOptions = {}): Promise<Orchd> {
  const storage = options.storage ?? (options.dataDir !== undefined ? 'leveldb' : 'memory');
  const { files, folder } = await configFiles(options.config ?? {});
  let running;
  try {
    const loaded = loadServerConfig(files);
    if (!loaded.ok) throw new Error(`orchd configuration:\n${loaded.problems.map(problemLine).join('\n')}`);
    running = await serve({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      storage,
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
      ...(options.now ? { now: options.now } : {}),
      eventTtlSeconds: options.eventTtlSeconds ?? 3600,
      logger: options.logger ?? silentLogger,
      config: loaded.config,
    });
  } catch (err) {
    if (folder) await rm(folder, { recursive: true, force: true });
    throw err;
  }
  const { url } = running;
  const { store } = running;
  const certificateAuthority = url.startsWith('https:') ? await servedCertificate(files, options.dataDir) : undefined;
  const baseline = baselineOf(store);
  // One reset at a time, and stop() after the one under way; nothing after stop().
  let queue: Promise<void> = Promise.resolve();
  let stopped = false;
  let stopping: Promise<void> | undefined;
  const serial = (fn: () => Promise<void>) =>
    (queue = queue
      .catch(() => undefined)
      .then(() => {
        if (stopped) throw new Error('orchd is stopped');
        return fn();
      }));
  return {
    url,
    port: running.port,
    get resourceVersion() {
      return String(store.appliedSeq);
    },
    kubeConfig() {
      const kc = new (clientNode().KubeConfig)();
      kc.loadFromString(kubeconfigYaml({ server: url, certificateAuthority }));
      return kc;
    },
    kubeconfig: (o = {}) => kubeconfigYaml({ server: url, certificateAuthority, ...o }),
    history: async (resource, namespace, name) => historyOf(store, resolveKind(running.api.context.kinds, resource), namespace, name),
    state: async (at) => stateAt(store, at === undefined ? undefined : versionOf(at)),
    async waitForVersion(rv, timeoutMs = 10_000) {
      const seq = versionOf(rv);
      if (!(await store.waitFor(seq, timeoutMs))) throw new Error(`resourceVersion ${seq} not reached in ${timeoutMs} ms (the server is at ${store.appliedSeq})`);
    },
    reset: () =>
      serial(() =>
        resetTo(store, baseline, () => {
          for (const end of [...running.api.context.watches]) end();
        }),
      ),
    stop: () =>
      (stopping ??= serial(async () => {
        stopped = true;
        await running.close();
        if (folder) await rm(folder, { recursive: true, force: true });
      })),
  };
}

/** A resourceVersion as the log's sequence number. */
function versionOf(rv: string | number): number {
  const n = typeof rv === 'number' ? rv : /^\d{1,15}$/.test(rv) ? Number(rv) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`resourceVersion ${JSON.stringify(rv)} is not a version of this server (a non-negative integer)`);
  return n;
}

/**
 * The configuration as files: a document given as an object is written (as JSON, which is YAML) to
 * a folder of its own, so the server loads, validates and reloads it as it does any file.
 */
async function configFiles(config: OrchdConfig): Promise<{ files: ServerConfigFiles; folder?: string }> {
  const files: ServerConfigFiles = { tlsCertFile: config.tlsCertFile, tlsPrivateKeyFile: config.tlsPrivateKeyFile };
  let folder: string | undefined;
  for (const key of ['authentication', 'authorization', 'encryption', 'egressSelector', 'tracing', 'admission'] as const) {
    const doc = config[key];
    if (doc === undefined || typeof doc === 'string') {
      files[key] = doc;
      continue;
    }
    folder ??= await mkdtemp(join(tmpdir(), 'orchd-config-'));
    files[key] = join(folder, `${key}.json`);
    await writeFile(files[key], JSON.stringify(doc), { mode: 0o600 });
  }
  return { files, ...(folder ? { folder } : {}) };
}

/** The certificate the server serves, for clients to trust: the one configured, or the self-signed one it made. */
async function servedCertificate(files: ServerConfigFiles, dataDir: string | undefined): Promise<Buffer | undefined> {
  const file = files.tlsCertFile ?? (dataDir !== undefined ? join(dataDir, SELF_SIGNED_CERT_FILE) : undefined);
  return file === undefined ? undefined : readFile(file);
}
