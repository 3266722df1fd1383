/**
 * The API groups and versions the registry serves, in the order Kubernetes presents them. Discovery
 * and OpenAPI both enumerate through here, so they cannot disagree on what exists.
 */
import type { KindStrategy } from '../api/strategy.js';

export interface ApiGroup {
  /** '' is the core group, served under /api. */
  name: string;
  /** Highest priority first (GA, then beta, then alpha); the first is the preferred version. */
  versions: string[];
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY = { '': 3, beta: 2, alpha: 1 } as const;

/**
 * Kubernetes' version priority (apimachinery's CompareKubeAwareVersionStrings), as a sort
 * comparator: v2 < v1 < v1beta2 < v1beta1 < v1alpha1 < anything not shaped like a version (those
 * sorted by name). Negative when a comes first.
 */
export function compareVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const sa = STABILITY[(ma[2] ?? '') as keyof typeof STABILITY];
  const sb = STABILITY[(mb[2] ?? '') as keyof typeof STABILITY];
  if (sa !== sb) return sb - sa;
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

/** Every group with a kind, in the order the registry first names it, core included. */
export function apiGroups(kinds: readonly KindStrategy[]): ApiGroup[] {
  const byName = new Map<string, Set<string>>();
  for (const k of kinds) {
    const versions = byName.get(k.group) ?? new Set<string>();
    for (const v of k.versions) versions.add(v);
    byName.set(k.group, versions);
  }
  return [...byName].map(([name, versions]) => ({ name, versions: [...versions].sort(compareVersions) }));
}

/** The kinds served at group/version. */
export const kindsAt = (kinds: readonly KindStrategy[], group: string, version: string): KindStrategy[] => kinds.filter((k) => k.group === group && k.versions.includes(version));

/** The URL prefix of a group-version: /api/v1 or /apis/<group>/<version>. */
export const prefixOf = (group: string, version: string): string => (group ? `/apis/${group}/${version}` : `/api/${version}`);
