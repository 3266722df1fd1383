/**
 * The kinds a history's CustomResourceDefinitions define, as a server running on that history serves
 * them: each made by the server's own code (customKindOf, the strategy a server's KindCatalog
 * defines for a CRD), so no kind is defined twice. Which CRDs define a kind is read from the log at
 * the versions a command reads: a CRD created later, or deleted earlier, defines nothing then.
 */
import { customKindOf } from '../../resources/crd/custom-kind.js';
import { kinds } from '../../resources/kinds.js';
import type { KindStrategy } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { collectionOfKind, type History } from './history.js';

/** The kind of the CustomResourceDefinitions themselves. */
export const CRD_KIND = kinds.find((k) => k.group === 'apiextensions.orch.io' && k.plural === 'customresourcedefinitions')!;

const builtIn = new Set(kinds.map(collectionOfKind));

/**
 * The kinds these CRDs define, one per collection. A CRD whose names the server refused
 * (NamesAccepted False in its status), or which serves no version, defines none; nor does one
 * claiming a built-in kind's collection. (A CRD's name is its plural and group, so two CRDs never
 * share a collection.)
 */
export function kindsOfCrds(crds: Iterable<KubeObject>): KindStrategy[] {
  const out = new Map<string, KindStrategy>();
  for (const crd of crds) {
    const conditions = (crd.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === 'NamesAccepted' && c.status === 'False')) continue;
    let kind: KindStrategy;
    try {
      kind = customKindOf(crd);
    } catch {
      // Serves no version: the server serves nothing of it either.
      continue;
    }
    const collection = collectionOfKind(kind);
    if (!builtIn.has(collection)) out.set(collection, kind);
  }
  return [...out.values()].sort((a, b) => (collectionOfKind(a) < collectionOfKind(b) ? -1 : 1));
}

/** The kinds the CRDs present at version rv define. */
export async function customKindsAt(h: History, rv: number): Promise<KindStrategy[]> {
  return rv < 1 ? [] : kindsOfCrds((await h.stateAt(rv, { kinds: [CRD_KIND] })).map((s) => s.object));
}

/**
 * The kinds the CRDs present at any version from..to define: those at `from` and every one written
 * after it up to `to`, each as last written in the span (a CRD deleted in the span still names the
 * kind its objects had before).
 */
export async function customKindsIn(h: History, from: number, to: number): Promise<KindStrategy[]> {
  if (from >= to) return customKindsAt(h, to);
  const crds = new Map<string, KubeObject>();
  if (from >= 1) for (const s of await h.stateAt(from, { kinds: [CRD_KIND] })) crds.set(s.key, s.object);
  for await (const c of h.changes(Math.max(from + 1, 1), to, { kinds: [CRD_KIND] })) crds.set(c.key, c.object);
  return kindsOfCrds(crds.values());
}

/** Every kind at version rv: the built-in ones and those its CRDs define. */
export async function everyKindAt(h: History, rv: number): Promise<KindStrategy[]> {
  return [...kinds, ...(await customKindsAt(h, rv))];
}
