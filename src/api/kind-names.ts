/**
 * Kinds as people name them, the one rule for every room that takes a kind's name (startOrchd's
 * history() and state(), the time-travel commands' --kind and RESOURCE/NAME): as kubectl takes them,
 * the plural, singular, Kind (any case) or a short name, alone, with its group
 * (`webapps.apps.example.com`) or with its version and group (`webapps.v1.apps.example.com`).
 * Built-in kinds of several words are also named by their initials (ValidatingAdmissionPolicy: vap);
 * a CRD's kind is not, since it says its own short names and kubectl takes only those.
 *
 * Where a name fits two kinds of the same plural and Kind (`events`: events.orch.io's Event and the
 * core one), the first in the served list is meant (events.orch.io's, served first); `events.` (the
 * core group, as a GroupResource prints it) names the core one.
 */
import type { KindStrategy } from './strategy.js';

/** What a kind is named by: enough to resolve a name without the kind's schema and hooks (resources/built-in-names.ts). */
export type KindNames = Pick<KindStrategy, 'group' | 'versions' | 'kind' | 'plural' | 'singular' | 'shortNames' | 'namespaced' | 'custom'>;

/** A name that fits no kind, or several kinds of different names. */
export class KindNameError extends Error {}

/** The initials of a kind of several words (ValidatingAdmissionPolicy: vap). */
const initialsOf = (kind: string): string | undefined => {
  const caps = kind.match(/[A-Z]/g) ?? [];
  return caps.length > 1 ? caps.join('').toLowerCase() : undefined;
};

/** Whether text names k. */
export function namesKind(k: KindNames, text: string): boolean {
  const [name, ...rest] = text.toLowerCase().split('.');
  const g = rest.join('.');
  const grouped = text.includes('.');
  const inGroup = !grouped || k.group === g || (k.versions.includes(rest[0]!) && rest.slice(1).join('.') === k.group);
  return inGroup && [k.plural, k.singular, k.kind.toLowerCase(), ...(k.shortNames ?? []), k.custom ? undefined : initialsOf(k.kind)].includes(name);
}

/** `plural.group`, or the plural alone in the core group: how a kind is named back to people. */
export const resourceName = (k: KindNames): string => (k.group === '' ? k.plural : `${k.plural}.${k.group}`);

/**
 * The kind text names among kinds: undefined when none; the first served when every fit has the same
 * plural and Kind; an error naming them when kinds of different names fit.
 */
export function kindNamed(kinds: readonly KindStrategy[], text: string): KindStrategy | undefined {
  const fits = kinds.filter((k) => namesKind(k, text));
  if (fits.length > 1 && !fits.every((k) => k.plural === fits[0]!.plural && k.kind === fits[0]!.kind)) {
    throw new KindNameError(`${JSON.stringify(text)} names several resources (${fits.map(resourceName).join(', ')}): name one of them with its group`);
  }
  return fits[0];
}

/**
 * The kind a name (kindNamed) or an apiVersion serving exactly one kind (`events.orch.io/v1`) means
 * among kinds: startOrchd's history() and state({resource}). None, or several, is a KindNameError.
 */
export function resolveKind(kinds: readonly KindStrategy[], what: string): KindStrategy {
  if (what.includes('/') || what === 'v1') {
    const at = kinds.filter((k) => k.versions.some((v) => (k.group ? `${k.group}/${v}` : v) === what));
    if (at.length === 1) return at[0]!;
    if (at.length > 1) throw new KindNameError(`${JSON.stringify(what)} names several resources (${at.map(resourceName).join(', ')}): name one of them`);
  } else {
    const k = kindNamed(kinds, what);
    if (k) return k;
  }
  throw new KindNameError(`${JSON.stringify(what)}: no such resource or apiVersion (served: ${kinds.map(resourceName).join(', ')})`);
}
