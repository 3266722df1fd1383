/**
 * Names in a policy resolved against the kinds this server serves: a paramKind's apiVersion/kind,
 * and the kinds a matchConstraints' resourceRules name (for type checking).
 */
import { listAt, stringsOf } from '../api/json-access.js';
import { kindIndex } from '../api/kind-index.js';
import type { KindStrategy } from '../api/strategy.js';

/** A served kind with its version, as Kubernetes prints a GroupVersionKind ("events.orch.io/v1, Kind=Event"). */
export interface ServedKind {
  kind: KindStrategy;
  version: string;
}

export const gvkText = (k: ServedKind): string => `${k.kind.group}/${k.version}, Kind=${k.kind.kind}`;

/** The kind an apiVersion ("group/version" or "v1") and kind name, when this server serves it. */
export function servedKind(kinds: readonly KindStrategy[], apiVersion: string, kind: string): KindStrategy | undefined {
  return kindIndex(kinds).apiVersionKind(apiVersion, kind);
}

/** Kubernetes checks at most this many kinds per policy. */
const MAX_TYPES = 10;

/**
 * The kinds a policy's resourceRules name exactly, as Kubernetes' type checker finds them: a rule
 * with a wildcard group or version names none, wildcard and subresource entries are skipped, and the
 * result is ordered by group, version, kind.
 */
export function kindsOfRules(kinds: readonly KindStrategy[], matchConstraints: unknown): ServedKind[] {
  const found = new Map<string, ServedKind>();
  for (const rule of listAt(matchConstraints, 'resourceRules')) {
    const groups = stringsOf(listAt(rule, 'apiGroups'));
    const versions = stringsOf(listAt(rule, 'apiVersions'));
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = stringsOf(listAt(rule, 'resources')).filter((r) => !/[*/]/.test(r));
    for (const group of [...groups].sort()) {
      for (const version of [...versions].sort()) {
        for (const resource of [...resources].sort()) {
          const kind = kinds.find((k) => k.group === group && k.plural === resource && k.versions.includes(version));
          if (!kind) continue;
          found.set(`${group}/${version}/${kind.kind}`, { kind, version });
          if (found.size === MAX_TYPES) return sorted(found);
        }
      }
    }
  }
  return sorted(found);
}

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const sorted = (m: Map<string, ServedKind>): ServedKind[] =>
  [...m.values()].sort((a, b) => byteOrder(a.kind.group, b.kind.group) || byteOrder(a.version, b.version) || byteOrder(a.kind.kind, b.kind.kind));
