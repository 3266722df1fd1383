import { revisionOf } from './kind-revisions.js';
import { servedAt, type KindStrategy } from './strategy.js';

/**
 * Lookups over one list of served kinds, by resource path and by apiVersion/kind. Every room asks
 * the list it was given (the server's registry, a test's own), through its index. A kind whose
 * versions differ (a CRD's) is answered as it is served at the version asked for (servedAt).
 */
export class KindIndex {
  private readonly byResource = new Map<string, KindStrategy>();
  private readonly byKind = new Map<string, KindStrategy>();

  constructor(readonly all: readonly KindStrategy[]) {
    for (const k of all) {
      for (const v of k.versions) {
        const atVersion = servedAt(k, v);
        this.byResource.set(`${k.group}/${v}/${k.plural}`, atVersion);
        this.byKind.set(`${k.group}/${v}/${k.kind}`, atVersion);
      }
    }
  }

  /** The kind served at /apis/<group>/<version>/<plural> (group '' is the core /api/v1). */
  resource(group: string, version: string, plural: string): KindStrategy | undefined {
    return this.byResource.get(`${group}/${version}/${plural}`);
  }

  /** The kind of a group, version and kind, e.g. ('events.orch.io', 'v1', 'Event'). */
  kind(group: string, version: string, kind: string): KindStrategy | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** The kind of an apiVersion ("group/version", or "v1" for the core group) and kind name. */
  apiVersionKind(apiVersion: string, kind: string): KindStrategy | undefined {
    const slash = apiVersion.indexOf('/');
    return this.kind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }
}

const indexes = new WeakMap<readonly KindStrategy[], { revision: number; index: KindIndex }>();

/** The index of a list of kinds, built once per revision of the list. */
export function kindIndex(list: readonly KindStrategy[]): KindIndex {
  const revision = revisionOf(list);
  let entry = indexes.get(list);
  if (!entry || entry.revision !== revision) indexes.set(list, (entry = { revision, index: new KindIndex(list) }));
  return entry.index;
}
