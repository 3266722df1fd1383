import type { EncryptionConfiguration, GroupResource, Provider } from '../../config/encryption.js';
import { aescbc } from './aescbc.js';
import { aesgcm } from './aesgcm.js';
import { IDENTITY } from './identity.js';
import { secretbox } from './secretbox.js';
import type { Transformer } from './transformer.js';

/** The providers of one resource list, ready to use. */
export interface ProviderChain {
  /** What writes: the first key of the first provider, or identity (store plainly). */
  writer: Transformer | typeof IDENTITY;
  /** Every key of every provider, in list order: a stored value is opened by the one whose prefix it has. */
  readers: Transformer[];
  /** Whether plain (unprefixed) values may be read: an identity provider is in the list. */
  readsPlain: boolean;
}

/** A configuration orchd cannot serve; start-up stops with it. */
export class UnsupportedEncryptionError extends Error {}

function transformersOf(p: Provider): Transformer[] | typeof IDENTITY {
  switch (p.type) {
    case 'identity':
      return IDENTITY;
    case 'aesgcm':
      return p.keys.map((k) => aesgcm(k.name, k.secret));
    case 'aescbc':
      return p.keys.map((k) => aescbc(k.name, k.secret));
    case 'secretbox':
      return p.keys.map((k) => secretbox(k.name, k.secret));
    case 'kms':
      // Envelope encryption through a KMS v2 plugin (gRPC on a unix socket) is not built yet; a
      // server that silently stored plainly what the file says to encrypt would be worse than none.
      throw new UnsupportedEncryptionError(`kms providers are not supported yet (provider ${JSON.stringify(p.name)})`);
  }
}

function chainOf(providers: Provider[]): ProviderChain {
  const built = providers.map(transformersOf);
  const first = built[0];
  return {
    writer: first === IDENTITY ? IDENTITY : first[0],
    readers: built.flatMap((b) => (b === IDENTITY ? [] : b)),
    readsPlain: built.includes(IDENTITY),
  };
}

const matches = (gr: GroupResource, group: string, resource: string): boolean =>
  (gr.group === '*' || gr.group === group) && (gr.resource === '*' || gr.resource === resource);

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

  constructor(config: EncryptionConfiguration) {
    this.lists = config.resources.map((r) => ({ resources: r.resources, chain: chainOf(r.providers) }));
    this.encryptsAny = this.lists.some((l) => l.chain.writer !== IDENTITY);
    this.readsPlainEverywhere = this.lists.every((l) => l.chain.readsPlain);
    const writer = this.lists.find((l) => l.chain.writer !== IDENTITY)?.chain.writer;
    this.checkpointWriter = writer === IDENTITY ? undefined : writer;
    this.allReaders = this.lists.flatMap((l) => l.chain.readers);
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
