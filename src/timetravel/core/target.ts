/**
 * RESOURCE/NAME as a command takes it (events/e1, vap/event-guard, wa/shop): split, checked and
 * made into the object's storage key. A built-in kind is found by its names alone
 * (resources/built-in-names.ts): `orchd history events/e1` loads no kind's schema, validation or CEL.
 * Any other name is a custom kind's, which kind-names.ts finds among the history's CRDs.
 */
import { namesKind, type KindNames } from '../../api/kind-names.js';
import { storageKey } from '../../api/object-keys.js';
import type { KindStrategy } from '../../api/strategy.js';
import { builtInNames } from '../../resources/built-in-names.js';
import { TimeTravelUsageError } from './errors.js';

/** RESOURCE/NAME as kubectl takes it, checked before the history is opened. */
export function splitTarget(target: string): { resource: string; name: string } {
  const slash = target.indexOf('/');
  if (slash <= 0 || slash === target.length - 1) throw new TimeTravelUsageError(`${JSON.stringify(target)}: not RESOURCE/NAME (e.g. events/e1, namespaces/default)`);
  return { resource: target.slice(0, slash), name: target.slice(slash + 1) };
}

export interface Target<K extends KindNames = KindStrategy> {
  kind: K;
  name: string;
  key: string;
  label: string;
}

/** The object `name` of kind in the namespace given, for a namespaced kind; target is how the command was told it. */
export function targetOf<K extends KindNames>(kind: K, target: string, namespace: string | undefined): Target<K> {
  const { name } = splitTarget(target);
  if (kind.namespaced && namespace === undefined) throw new TimeTravelUsageError(`${kind.plural} are namespaced: give -n NAMESPACE`);
  return { kind, name, key: storageKey(kind, kind.namespaced ? namespace! : '', name), label: `${target}${kind.namespaced ? ` in namespace ${namespace}` : ''}` };
}

/** The target when RESOURCE names a built-in kind (the first that it names, as the kinds are served); undefined when it names none. */
export function builtInTarget(target: string, namespace: string | undefined): Target<KindNames> | undefined {
  const { resource } = splitTarget(target);
  const kind = builtInNames.find((k) => namesKind(k, resource));
  return kind && targetOf(kind, target, namespace);
}
