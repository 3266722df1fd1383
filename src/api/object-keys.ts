/**
 * Storage keys: `<collection>/<namespace>/<name>` with collection = `<group>/<plural>` (the core group is
 * the empty string) and an empty namespace for cluster-scoped kinds. Inside a collection, objects sort
 * by `<namespace>/<name>`, so one namespace is one contiguous range and list order is Kubernetes' order.
 */
export interface ResourceRef {
  group: string;
  plural: string;
}

export const collectionOf = (r: ResourceRef): string => `${r.group}/${r.plural}`;
export const suffixOf = (namespace: string, name: string): string => `${namespace}/${name}`;
export const storageKey = (r: ResourceRef, namespace: string, name: string): string => `${collectionOf(r)}/${suffixOf(namespace, name)}`;

/** Splits a storage key back into collection and in-collection suffix (group has no '/', plural none). */
export function splitKey(key: string): { collection: string; suffix: string } {
  const first = key.indexOf('/');
  const second = key.indexOf('/', first + 1);
  return { collection: key.slice(0, second), suffix: key.slice(second + 1) };
}

/** The keys listed for collection c in m, an empty list added when there are none yet. */
export function listIn(m: Map<string, string[]>, c: string): string[] {
  let list = m.get(c);
  if (!list) m.set(c, (list = []));
  return list;
}
