/**
 * How many times a server's list of kinds changed (KindCatalog in registry.ts bumps it): what is
 * built from a list (indexes, discovery, OpenAPI) is kept per revision. A list no registry changes
 * (a test's own) stays at 0. Its own file, so the rooms that cache per list need not load every kind.
 */
import type { KindStrategy } from './strategy.js';

export const revisions = new WeakMap<readonly KindStrategy[], number>();

export const revisionOf = (list: readonly KindStrategy[]): number => revisions.get(list) ?? 0;

/** What build makes of a list, made again whenever the list's revision moves. */
export function perList<T>(list: readonly KindStrategy[], build: () => T): () => T {
  let made: { revision: number; value: T } | undefined;
  return () => {
    const revision = revisionOf(list);
    if (made?.revision !== revision) made = { revision, value: build() };
    return made.value;
  };
}
