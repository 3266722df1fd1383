/**
 * The Orchd startOrchd hands back: the server it started, read and reset through the store and the
 * registry, with its state (the baseline reset() returns to, the resets under way, the last commit)
 * held here by name. Its methods are bound (arrow properties): a test may pass orchd.stop as a hook.
 */
import { rm } from 'node:fs/promises';
import type { Subscription } from 'rxjs';
import { resolveKind } from '../api/kind-names.js';
import { kubeconfigYaml } from '../config/kubeconfig-yaml.js';
import { parseFaultObject, type FaultConfiguration, type FaultRule } from '../config/faults.js';
import { concerns, faultsInPlace, type FaultHistoryEntry } from '../faults/in-place.js';
import type { InjectedFault } from '../faults/journal.js';
import type { Running } from '../serve.js';
import { StoreError } from '../store/errors.js';
import { historyOf, stateAt, type HistoryEntry } from '../store/past-reads.js';
import { baselineOf, resetTo } from '../store/reset.js';
import { loadClientNode } from './client-node.js';
import { quietFor } from './settled.js';
import type { KubeConfig } from '@kubernetes/client-node';

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

/** What startOrchd made besides the server: what clients trust, the faults reset() returns to, the folder of the configuration files. */
export interface StartedWith {
  certificateAuthority: Buffer | undefined;
  startFaults: FaultConfiguration | undefined;
  folder: string | undefined;
}

export class EmbeddedOrchd implements Orchd {
  readonly url: string;
  readonly port: number;
  private readonly store: Running['store'];
  private readonly baseline: ReturnType<typeof baselineOf>;
  /** When the newest write committed (this process's clock), for settled(). */
  private readonly lastCommit = { at: Date.now() };
  private readonly commits: Subscription;
  /** One reset at a time, and stop() after the one under way; nothing after stop(). */
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly running: Running,
    private readonly started: StartedWith,
  ) {
    this.url = running.url;
    this.port = running.port;
    this.store = running.store;
    this.baseline = baselineOf(this.store);
    this.commits = this.store.changes$.subscribe(() => (this.lastCommit.at = Date.now()));
  }

  get resourceVersion(): string {
    return String(this.store.appliedSeq);
  }

  private get context() {
    return this.running.api.context;
  }

  readonly kubeConfig = (): KubeConfig => {
    const kc = new (loadClientNode().KubeConfig)();
    kc.loadFromString(kubeconfigYaml({ server: this.url, certificateAuthority: this.started.certificateAuthority }));
    return kc;
  };

  readonly kubeconfigYaml = (o: { token?: string } = {}): string => kubeconfigYaml({ server: this.url, certificateAuthority: this.started.certificateAuthority, ...o });

  readonly history = (async (resource: string, namespace: string | undefined, name: string, o?: { faults: true }) => {
    const kind = resolveKind(this.context.kinds, resource);
    const entries = await historyOf(this.store, kind, namespace, name);
    if (!o?.faults) return entries;
    const plural = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
    const ns = kind.namespaced ? (namespace ?? '') : '';
    return faultsInPlace(
      entries,
      this.context.faults!.injected().filter((f) => concerns(f, plural, ns, name)),
    );
  }) as Orchd['history'];

  readonly faults: OrchdFaults = {
    injected: () => this.context.faults!.injected(),
    set: (rules) => {
      const { seed } = this.context.faults!.configuration();
      this.context.faults!.set(faultsOf(Array.isArray(rules) ? { seed, rules } : { seed, ...rules }));
    },
    clear: () => this.context.faults!.clear(),
  };

  readonly state = async <T extends object>(what?: string | number | OrchdStateOptions): Promise<T[]> => {
    const o = typeof what === 'object' ? what : { at: what };
    const filter = { ...(o.resource !== undefined ? { kind: resolveKind(this.context.kinds, o.resource) } : {}), ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) };
    return (await stateAt(this.store, o.at === undefined ? undefined : versionOf(o.at), filter).catch(expired)) as unknown as T[];
  };

  readonly settled = ({ quietMs = 100, timeoutMs = 10_000 } = {}): Promise<string> => quietFor(this.store, this.lastCommit, quietMs, timeoutMs);

  readonly watchers = ({ atLeast, timeoutMs = 10_000 }: { atLeast: number; timeoutMs?: number }): Promise<number> => this.context.watches.atLeast(atLeast, timeoutMs);

  readonly waitForVersion = async (rv: string | number, timeoutMs = 10_000): Promise<void> => {
    const seq = versionOf(rv);
    if (!(await this.store.waitFor(seq, timeoutMs))) throw new Error(`resourceVersion ${seq} not reached in ${timeoutMs} ms (the server is at ${this.store.appliedSeq})`);
  };

  readonly reset = (): Promise<void> =>
    this.serial(async () => {
      const { objects } = this.context;
      await objects.writes.close('orchd is resetting: writes are refused until reset() is done');
      try {
        await resetTo(this.store, this.baseline, () => {
          for (const end of [...this.context.watches]) end();
        });
        if (this.started.startFaults) this.context.faults?.restart(this.started.startFaults);
      } finally {
        objects.writes.open();
      }
    });

  readonly stop = (): Promise<void> =>
    (this.stopping ??= this.serial(async () => {
      this.stopped = true;
      this.commits.unsubscribe();
      await this.running.close();
      if (this.started.folder) await rm(this.started.folder, { recursive: true, force: true });
    }));

  private serial(fn: () => Promise<void>): Promise<void> {
    return (this.queue = this.queue
      .catch(() => undefined)
      .then(() => {
        if (this.stopped) throw new Error('orchd is stopped');
        return fn();
      }));
  }
}

/** The store's compacted-version error as the package's OrchdExpiredError; any other as it is. */
function expired(err: unknown): never {
  if (err instanceof StoreError && err.code === 'COMPACTED') {
    throw new OrchdExpiredError(`resourceVersion ${err.seq ?? ''} is older than the history kept: ${err.message}`, String(err.oldest ?? ''));
  }
  throw err;
}

/** Fault rules as the embedded API takes them, read as a FaultConfiguration file is: a bad one throws one line. */
export function faultsOf(value: { seed?: number; rules: FaultRule[] }): FaultConfiguration {
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
