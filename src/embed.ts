/**
 * orchd inside a test process: startOrchd() runs the whole server (serve.ts) on a loopback port, on a
 * memory log by default, and hands back what a controller's tests need — a client configuration, the
 * history the log keeps, and a reset between tests that takes milliseconds instead of a restart.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { problemLine } from './config/load.js';
import { loadClientNode } from './embed/client-node.js';
import { loadServerConfig, type ServerConfigFiles } from './config/server-config.js';
import { baselineOf, resetTo } from './store/reset.js';
import { resolveKind } from './api/kind-names.js';
import { historyOf, stateAt, type HistoryEntry } from './store/past-reads.js';
import { StoreError } from './store/errors.js';
import type { Server } from './http/context.js';
import { SELF_SIGNED_CERT_FILE } from './http/tls.js';
import { kubeconfigYaml } from './config/kubeconfig-yaml.js';
import { silentLogger, type Logger } from './observability/logger.js';
import { serve, type StorageKind } from './serve.js';
import { quietFor } from './embed/settled.js';
import { parseAllDocuments } from 'yaml';
import { filter, firstValueFrom, throwError, timeout } from 'rxjs';
import { runAsSystem } from './admission/index.js';
import { crdCondition } from './resources/custom-resource-definition.js';
import type { KubeObject } from './api/types.js';
import { formatFieldError } from './api/field-errors.js';
import { RegistryError } from './registry/errors.js';
import { parseFaultObject, type FaultConfiguration, type FaultRule } from './config/faults.js';
import type { InjectedFault } from './faults/journal.js';
import { concerns, faultsInPlace, type FaultHistoryEntry } from './faults/in-place.js';

export type { FaultConfiguration, FaultRule, InjectedFault, FaultHistoryEntry };

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
  /**
   * CustomResourceDefinitions installed at start (as envtest's CRDDirectoryPaths): objects, or paths
   * of YAML or JSON files (several documents each). The start resolves once each is Established;
   * they are part of what reset() returns to, so they stay across tests.
   */
  crds?: (Record<string, unknown> | string)[];
  /**
   * Faults injected on demand, as a FaultConfiguration file holds them (apiVersion and kind may be
   * left out): `{ seed: 7, rules: [{ match: {verbs: ['update']}, probability: 0.3, inject: {status: 409} }] }`.
   * A bad rule fails the start with one line naming its field path.
   */
  faults?: { seed?: number; rules: FaultRule[] };
}

/** The faults of a running orchd: what was injected, and the rules from now on. */
export interface OrchdFaults {
  /** Every fault injected so far, oldest first: when, which request, which rule, what was done. */
  injected(): InjectedFault[];
  /** New rules from now on (the same seed unless given, a new sequence); a bad one throws and nothing changes. */
  set(rules: FaultRule[] | { seed?: number; rules: FaultRule[] }): void;
  /** No rules: healthy again. */
  clear(): void;
}

/**
 * An object as history() and state() give it by default. Typed so that client-node's
 * KubernetesObject is assignable to it and it to KubernetesObject: what both say of an object, and
 * no index signature. Timestamps are left out (client-node types them as Date; the log holds RFC
 * 3339 strings); name your own type (history<MyResource>()) to read the rest.
 */
export interface OrchdObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: { [key: string]: string };
    annotations?: { [key: string]: string };
    finalizers?: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    deletionGracePeriodSeconds?: number;
  };
}

/** What state() gives: the objects at a version (default: now), of one resource, of one namespace. */
export interface OrchdStateOptions {
  at?: string | number;
  /** A resource, kind or apiVersion, as history() takes them. */
  resource?: string;
  namespace?: string;
}

/** state() at a version older than the history kept (compaction, or a reset): as Kubernetes answers it, 410 Expired. */
export class OrchdExpiredError extends Error {
  override readonly name = 'OrchdExpiredError';
  readonly code = 410;
  readonly reason = 'Expired';
  constructor(
    message: string,
    /** The oldest resourceVersion still readable. */
    readonly oldestResourceVersion: string,
  ) {
    super(message);
  }
}

export interface Orchd {
  /** http://127.0.0.1:<port> (https with TLS configured). */
  readonly url: string;
  readonly port: number;
  /** The newest resourceVersion the server has applied (a list's resourceVersion now). */
  readonly resourceVersion: string;
  /** A @kubernetes/client-node KubeConfig for this server (client-node must be installed: an optional peer dependency). */
  kubeConfig(): KubeConfig;
  /** A kubeconfig file's text (YAML) for this server, for kubectl and other clients. */
  kubeconfigYaml(options?: { token?: string }): string;
  /**
   * Every version of one object still in the log, oldest first, deletes included. resource: a
   * resource (`events`, `roles.rbac.orch.io`), a kind (`Event`) or an apiVersion that serves one
   * kind (`events.orch.io/v1`); namespace is ignored for cluster-scoped resources.
   */
  history<T extends object = OrchdObject>(resource: string, namespace: string | undefined, name: string): Promise<HistoryEntry<T>[]>;
  /** The same, with the faults that concerned the object (requests that named it, or its collection's) in place among the writes. */
  history<T extends object = OrchdObject>(resource: string, namespace: string | undefined, name: string, o: { faults: true }): Promise<(HistoryEntry<T> | FaultHistoryEntry)[]>;
  readonly faults: OrchdFaults;
  /**
   * Every object at a resourceVersion (default: now), as the log had them; OrchdExpiredError (410
   * Expired) below the history kept. Given options: at, and only the objects of one resource (named
   * as history() names it) and of one namespace.
   */
  state<T extends object = OrchdObject>(at?: string | number | OrchdStateOptions): Promise<T[]>;
  /**
   * Resolves once no write has committed for quietMs (default 100): the controllers under test have
   * stopped writing, so "exactly once" can be asserted. Resolves to the resourceVersion then;
   * rejects after timeoutMs (default 10 s) of writes that never pause that long.
   */
  settled(o?: { quietMs?: number; timeoutMs?: number }): Promise<string>;
  /** Resolves once the server has applied resourceVersion rv; rejects after timeoutMs (default 10 s). */
  waitForVersion(rv: string | number, timeoutMs?: number): Promise<void>;
  /**
   * Resolves once at least atLeast watches are open, all opened since the last reset() (which ends
   * every watch): the informers of the code under test have listed again and watch from now on.
   * Rejects after timeoutMs (default 10 s). Resolves to how many are open.
   */
  watchers(o: { atLeast: number; timeoutMs?: number }): Promise<number>;
  /**
   * Back to the state this start left the server in (on memory: the system namespaces and bootstrap
   * RBAC; on a LevelDB folder, also what its log held), in place: watches end (clients relist),
   * objects written since are deleted, the log and views keep no trace of them, and the objects
   * that stay keep only their current version. resourceVersions go on rising. Writes in flight when
   * it is called are finished first (and deleted with the rest); writes that arrive while it runs are
   * refused (503, Retry-After), so nothing written before it survives it. Faults go back to the
   * start's rules and their first draws, and injected() starts empty again.
   */
  reset(): Promise<void>;
  /** Ends watches, lets requests in flight finish, closes the log; again, the same promise. */
  stop(): Promise<void>;
}

/** Long: orchd composed in a test process, then the Orchd it hands back, whose methods share this closure's state (the server, the baseline, the reset under way). */
export async function startOrchd(options: StartOrchdOptions = {}): Promise<Orchd> {
  const storage = options.storage ?? (options.dataDir !== undefined ? 'leveldb' : 'memory');
  const { files, folder } = await configFiles(options.config ?? {});
  let running;
  try {
    const loaded = loadServerConfig(files);
    if (!loaded.ok) throw new Error(`orchd configuration:\n${loaded.problems.map(problemLine).join('\n')}`);
    const faults = options.faults ? faultsOf(options.faults) : undefined;
    running = await serve({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      storage,
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
      ...(options.now ? { now: options.now } : {}),
      eventTtlSeconds: options.eventTtlSeconds ?? 3600,
      logger: options.logger ?? silentLogger,
      config: loaded.config,
      ...(faults ? { faults } : {}),
    });
  } catch (err) {
    if (folder) await rm(folder, { recursive: true, force: true });
    throw err;
  }
  const { url } = running;
  const { store } = running;
  // The rules reset() returns to.
  const startFaults = running.api.context.faults?.configuration();
  try {
    await installCrds(running.api.context, options.crds ?? []);
  } catch (err) {
    await running.close();
    if (folder) await rm(folder, { recursive: true, force: true });
    throw err;
  }
  const certificateAuthority = url.startsWith('https:') ? await servedCertificate(files, options.dataDir) : undefined;
  const baseline = baselineOf(store);
  // When the newest write committed (this process's clock), for settled().
  const lastCommit = { at: Date.now() };
  const commits = store.changes$.subscribe(() => (lastCommit.at = Date.now()));
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
      const kc = new (loadClientNode().KubeConfig)();
      kc.loadFromString(kubeconfigYaml({ server: url, certificateAuthority }));
      return kc;
    },
    kubeconfigYaml: (o = {}) => kubeconfigYaml({ server: url, certificateAuthority, ...o }),
    history: (async (resource: string, namespace: string | undefined, name: string, o?: { faults: true }) => {
      const kind = resolveKind(running.api.context.kinds, resource);
      const entries = await historyOf(store, kind, namespace, name);
      if (!o?.faults) return entries;
      const plural = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
      const ns = kind.namespaced ? (namespace ?? '') : '';
      return faultsInPlace(
        entries,
        running.api.context.faults!.injected().filter((f) => concerns(f, plural, ns, name)),
      );
    }) as Orchd['history'],
    faults: {
      injected: () => running.api.context.faults!.injected(),
      set: (rules) =>
        running.api.context.faults!.set(
          faultsOf(Array.isArray(rules) ? { seed: running.api.context.faults!.configuration().seed, rules } : { seed: running.api.context.faults!.configuration().seed, ...rules }),
        ),
      clear: () => running.api.context.faults!.clear(),
    },
    state: async <T extends object>(what?: string | number | OrchdStateOptions) => {
      const o = typeof what === 'object' ? what : { at: what };
      const filter = { ...(o.resource !== undefined ? { kind: resolveKind(running.api.context.kinds, o.resource) } : {}), ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) };
      return (await stateAt(store, o.at === undefined ? undefined : versionOf(o.at), filter).catch(expired)) as unknown as T[];
    },
    settled: ({ quietMs = 100, timeoutMs = 10_000 } = {}) => quietFor(store, lastCommit, quietMs, timeoutMs),
    watchers: ({ atLeast, timeoutMs = 10_000 }) => running.api.context.watches.atLeast(atLeast, timeoutMs),
    async waitForVersion(rv, timeoutMs = 10_000) {
      const seq = versionOf(rv);
      if (!(await store.waitFor(seq, timeoutMs))) throw new Error(`resourceVersion ${seq} not reached in ${timeoutMs} ms (the server is at ${store.appliedSeq})`);
    },
    reset: () =>
      serial(async () => {
        const { objects } = running.api.context;
        await objects.writes.close('orchd is resetting: writes are refused until reset() is done');
        try {
          await resetTo(store, baseline, () => {
            for (const end of [...running.api.context.watches]) end();
          });
          if (startFaults) running.api.context.faults?.restart(startFaults);
        } finally {
          objects.writes.open();
        }
      }),
    stop: () =>
      (stopping ??= serial(async () => {
        stopped = true;
        commits.unsubscribe();
        await running.close();
        if (folder) await rm(folder, { recursive: true, force: true });
      })),
  };
}

/** The store's compacted-version error as the package's OrchdExpiredError; any other as it is. */
function expired(err: unknown): never {
  if (err instanceof StoreError && err.code === 'COMPACTED') {
    throw new OrchdExpiredError(`resourceVersion ${err.seq ?? ''} is older than the history kept: ${err.message}`, String(err.oldest ?? ''));
  }
  throw err;
}

/** Creates the CRDs (documents of files, or objects) and resolves once each is Established. */
async function installCrds(context: Server, list: (Record<string, unknown> | string)[]): Promise<void> {
  const docs: unknown[] = [];
  for (const item of list) {
    // A copy: the create stamps metadata, and the caller may hand the same objects to another start.
    if (typeof item !== 'string') docs.push(structuredClone(item));
    else for (const d of parseAllDocuments(await readFile(item, 'utf8'))) if (d.contents !== null) docs.push(d.toJS());
  }
  const { objects, kinds } = context;
  const crdKind = kinds.find((k) => k.group === 'apiextensions.orch.io' && k.kind === 'CustomResourceDefinition')!;
  const names: string[] = [];
  for (const doc of docs) {
    const created = await runAsSystem(() => objects.create(crdKind, undefined, doc as KubeObject, { dryRun: false })).catch((err: unknown) => {
      const errors = err instanceof RegistryError ? (err.extra.fieldErrors ?? []).map(formatFieldError) : [];
      throw errors.length ? new Error(`CustomResourceDefinition ${String((doc as KubeObject).metadata?.name)} is invalid:\n${errors.join('\n')}`) : err;
    });
    names.push(created.metadata.name ?? '');
  }
  const established = () => names.every((n) => crdCondition(objects.get(crdKind, undefined, n).obj, 'Established'));
  if (established()) return;
  await firstValueFrom(
    objects.changes(crdKind).pipe(filter(established), timeout({ first: 10_000, with: () => throwError(() => new Error(`CustomResourceDefinitions not Established in 10 s: ${names.join(', ')}`)) })),
  );
}

/** Fault rules as the embedded API takes them, read as a FaultConfiguration file is: a bad one throws one line. */
function faultsOf(value: { seed?: number; rules: FaultRule[] }): FaultConfiguration {
  const parsed = parseFaultObject(value as unknown as Record<string, unknown>);
  if (!parsed.ok) throw new Error(`orchd faults: ${parsed.message}`);
  return parsed.value;
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
