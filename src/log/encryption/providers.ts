import type { EncryptionConfiguration, GroupResource, Provider } from './configuration.js';
import { aescbc } from './aescbc.js';
import { aesgcm } from './aesgcm.js';
import { IDENTITY } from './identity.js';
import { KMS_TIMINGS, KmsV2Transformer, type KmsTimings } from './kms/kms-v2.js';
import { KmsPluginClient } from './kms/plugin-client.js';
import { secretbox } from './secretbox.js';
import type { Transformer } from './transformer.js';

export interface ProviderOptions {
  /** KMS v2 poll and cache timings (kube-apiserver's by default). */
  kmsTimings?: Partial<KmsTimings>;
  /** A KMS plugin's health changed: the problem, or undefined once it is healthy again. */
  onKmsHealth?: (provider: string, problem: string | undefined) => void;
}

/** The providers of one resource list, ready to use. */
export interface ProviderChain {
  /** What writes: the first key of the first provider, or identity (store plainly). */
  writer: Transformer | typeof IDENTITY;
  /** Every key of every provider, in list order: a stored value is opened by the one whose prefix it has. */
  readers: Transformer[];
  /** Whether plain (unprefixed) values may be read: an identity provider is in the list. */
  readsPlain: boolean;
}

/** How long a command (fork, replay, rewrite-encryption) waits for KMS plugins to answer before it gives up. */
export const COMMAND_KMS_WAIT_MS = 30_000;

/** A configuration orchd cannot serve; start-up stops with it. */
export class UnsupportedEncryptionError extends Error {}

function transformersOf(p: Provider, opts: ProviderOptions): Transformer[] | typeof IDENTITY {
  switch (p.type) {
    case 'identity':
      return IDENTITY;
    case 'aesgcm':
      return p.keys.map((k) => aesgcm(k.name, k.secret));
    case 'aescbc':
      return p.keys.map((k) => aescbc(k.name, k.secret));
    case 'secretbox':
      return p.keys.map((k) => secretbox(k.name, k.secret));
    case 'kms': {
      if (p.apiVersion === 'v1') {
        // kube-apiserver refuses KMS v1 unless its deprecated feature gate is on; orchd has no such gate.
        throw new UnsupportedEncryptionError(`kms provider ${JSON.stringify(p.name)}: KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead`);
      }
      const timings = { ...KMS_TIMINGS, ...opts.kmsTimings };
      return [new KmsV2Transformer(p.name, new KmsPluginClient(p.endpoint, p.timeoutMs), timings, (problem) => opts.onKmsHealth?.(p.name, problem))];
    }
  }
}

function chainOf(providers: Provider[], opts: ProviderOptions): ProviderChain {
  const built = providers.map((p) => transformersOf(p, opts));
  const first = built[0];
  return {
    writer: first === IDENTITY ? IDENTITY : first[0],
    readers: built.flatMap((b) => (b === IDENTITY ? [] : b)),
    readsPlain: built.includes(IDENTITY),
  };
}

const matches = (gr: GroupResource, group: string, resource: string): boolean => (gr.group === '*' || gr.group === group) && (gr.resource === '*' || gr.resource === resource);

/**
 * Which provider chain applies to each collection (`<group>/<plural>`): the first resource list that
 * names it, exactly or by a wildcard (earlier lists take precedence); undefined when none does, and
 * the resource is stored plainly. Every provider is built at construction, so a bad one stops
 * start-up rather than a write.
 */
export class ResourceProviders {
  private readonly lists: { resources: GroupResource[]; chain: ProviderChain }[];
  private readonly cache = new Map<string, ProviderChain | undefined>();

  /** Whether some resource is written encrypted. */
  readonly encryptsAny: boolean;
  /** Whether every resource may be read plainly (no list lacks an identity provider). */
  readonly readsPlainEverywhere: boolean;

  /** The KMS plugins of the configuration: they are polled from start() to close(). */
  readonly kms: KmsV2Transformer[];

  constructor(config: EncryptionConfiguration, opts: ProviderOptions = {}) {
    this.lists = config.resources.map((r) => ({ resources: r.resources, chain: chainOf(r.providers, opts) }));
    this.encryptsAny = this.lists.some((l) => l.chain.writer !== IDENTITY);
    this.readsPlainEverywhere = this.lists.every((l) => l.chain.readsPlain);
    const writer = this.lists.find((l) => l.chain.writer !== IDENTITY)?.chain.writer;
    this.checkpointWriter = writer === IDENTITY ? undefined : writer;
    this.allReaders = this.lists.flatMap((l) => l.chain.readers);
    this.kms = this.allReaders.filter((t): t is KmsV2Transformer => t instanceof KmsV2Transformer);
  }

  start(): void {
    for (const k of this.kms) k.start();
  }

  /**
   * Whether every KMS plugin has been healthy once (at once without one): waits for it, at most
   * limitMs when given.
   */
  async ready(limitMs?: number): Promise<boolean> {
    const all = Promise.all(this.kms.map((k) => k.ready())).then(() => true);
    if (limitMs === undefined) return all;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), limitMs)));
    try {
      return await Promise.race([all, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The kms-providers health check: each failing plugin with why. */
  health(): { name: string; problem: string }[] {
    return this.kms.flatMap((k) => {
      const problem = k.health();
      return problem === undefined ? [] : [{ name: k.name, problem }];
    });
  }

  close(): void {
    for (const k of this.kms) k.close();
  }

  /**
   * What seals a checkpoint (which holds objects of every resource): the writer of the first list
   * that encrypts; undefined when none does.
   */
  readonly checkpointWriter: Transformer | undefined;
  /** Every configured key, for opening a checkpoint by its prefix. */
  readonly allReaders: Transformer[];

  /** The chain of a collection `<group>/<plural>`. */
  forCollection(collection: string): ProviderChain | undefined {
    if (this.cache.has(collection)) return this.cache.get(collection);
    const slash = collection.indexOf('/');
    const group = collection.slice(0, slash);
    const resource = collection.slice(slash + 1);
    const chain = this.lists.find((l) => l.resources.some((gr) => matches(gr, group, resource)))?.chain;
    this.cache.set(collection, chain);
    return chain;
  }
}
