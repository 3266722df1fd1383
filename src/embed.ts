/**
 * orchd inside a test process: startOrchd() runs the whole server (serve.ts) on a loopback port, on a
 * memory log by default, and hands back what a controller's tests need — a client configuration, the
 * history the log keeps, and a reset between tests that takes milliseconds instead of a restart.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { problemLine } from './config/load.js';
import { loadServerConfig, type ServerConfigFiles } from './config/server-config.js';
import type { Server } from './http/context.js';
import { SELF_SIGNED_CERT_FILE } from './http/tls.js';
import { silentLogger, type Logger } from './observability/logger.js';
import { serve, type StorageKind } from './serve.js';
import { parseAllDocuments } from 'yaml';
import { filter, firstValueFrom, throwError, timeout } from 'rxjs';
import { runAsSystem } from './admission/index.js';
import { crdCondition } from './resources/custom-resource-definition.js';
import type { KubeObject } from './api/types.js';
import { formatFieldError } from './api/field-errors.js';
import { RegistryError } from './registry/errors.js';
import type { FaultConfiguration, FaultRule } from './config/faults.js';
import type { InjectedFault } from './faults/journal.js';
import type { FaultHistoryEntry } from './faults/in-place.js';
import { EmbeddedOrchd, faultsOf, type Orchd } from './embed/orchd.js';

export type { FaultConfiguration, FaultRule, InjectedFault, FaultHistoryEntry };
// The Orchd a start hands back, and what it gives, are declared with it (embed/orchd.ts).
export { OrchdExpiredError, type Orchd, type OrchdFaults, type OrchdObject, type OrchdStateOptions } from './embed/orchd.js';

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

/** orchd composed in a test process: the server started, the CRDs installed, then the Orchd that reads, resets and stops it (embed/orchd.ts). */
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
  return new EmbeddedOrchd(running, { certificateAuthority, startFaults, folder });
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
