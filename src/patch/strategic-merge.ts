/**
 * Kubernetes' strategic merge patch: a merge patch that knows, from the schema, which lists merge
 * by a key (`x-kubernetes-patch-strategy: merge` with `x-kubernetes-patch-merge-key`) instead of
 * being replaced, plus directives:
 *
 * - `$patch: replace` in a map replaces the map; as a list item it replaces the whole list with the
 *   patch's other items. `$patch: delete` in a map empties it; as a keyed item it deletes that item.
 *   `$patch: merge` in a map is the default.
 * - `$deleteFromPrimitiveList/<field>: [v…]` removes values from a merged list of scalars.
 * - `$setElementOrder/<field>: [...]` gives the order of the resulting list.
 * - `$retainKeys: [k…]` drops every member of the map not listed (patch members must be listed).
 *
 * Fields without a strategy are merged as in a JSON merge patch: null deletes, lists replace.
 * Ordering follows Kubernetes: items named by the patch (or by `$setElementOrder`) in that order,
 * interleaved with server-only items at their original positions where both are known.
 */
import type { Schema } from '../api/schema.js';
import { PatchError } from './errors.js';
import { cloneJson, hasKey, isObject, jsonEqual, setKey, type JsonObject } from '../api/json-access.js';
import { memberSchema, patchMergeKey, patchStrategies } from './schema-shape.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

const bad = (message: string): PatchError => new PatchError('BadPatch', message);

/** The patched copy of original; neither argument is changed. */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: Schema): unknown {
  if (!isObject(patch)) throw bad(`json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`);
  return mergeMap(isObject(original) ? cloneJson(original) : {}, cloneJson(patch), schema);
}

/** Merges patch into original (both owned by the caller and changed in place). */
function mergeMap(original: JsonObject, patch: JsonObject, schema: Schema | undefined): JsonObject {
  if (hasKey(patch, PATCH)) {
    const directive = patch[PATCH];
    delete patch[PATCH];
    if (directive === 'replace') return mergeMap({}, patch, schema);
    if (directive === 'delete') return {};
    if (directive !== 'merge') throw bad(`unknown patch type: ${String(directive)} in map`);
  }
  if (hasKey(patch, RETAIN_KEYS)) retainKeys(original, patch);

  const orders = new Map<string, unknown[]>();
  for (const k of Object.keys(patch)) {
    if (k.startsWith(SET_ELEMENT_ORDER)) {
      const order = patch[k];
      if (!Array.isArray(order)) throw bad('invalid patch format of setElementOrder list');
      orders.set(k.slice(SET_ELEMENT_ORDER.length), order);
      delete patch[k];
    } else if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const values = patch[k];
      if (!Array.isArray(values)) throw bad('invalid patch format of primitive list');
      const field = k.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const cur = original[field];
      if (Array.isArray(cur)) original[field] = cur.filter((v) => !values.some((d) => jsonEqual(d, v)));
      delete patch[k];
    }
  }

  for (const [k, value] of Object.entries(patch)) {
    const sub = memberSchema(schema, k);
    const present = hasKey(original, k);
    if (value === null) {
      delete original[k];
    } else if (isObject(value)) {
      if (patchStrategies(sub).includes('replace')) setKey(original, k, mergeMap({}, value, sub));
      else {
        const deletes = value[PATCH] === 'delete';
        const merged = mergeMap(present && isObject(original[k]) ? (original[k] as JsonObject) : {}, value, sub);
        if (!(deletes && !present)) setKey(original, k, merged);
      }
    } else if (Array.isArray(value)) {
      setKey(original, k, mergeList(present && Array.isArray(original[k]) ? (original[k] as unknown[]) : [], value, sub, orders.get(k)));
    } else {
      setKey(original, k, value);
    }
  }
  // An order directive without a list in the patch reorders the current list.
  for (const [field, order] of orders) {
    const cur = original[field];
    if (!hasKey(patch, field) && Array.isArray(cur)) original[field] = normalizeOrder(cur, order, cur, patchMergeKey(memberSchema(schema, field)));
  }
  return original;
}

function retainKeys(original: JsonObject, patch: JsonObject): void {
  const keys = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) throw bad('invalid patch format of retainKeys');
  for (const k of Object.keys(patch)) {
    if (!k.startsWith('$') && !keys.includes(k)) throw new PatchError('Unprocessable', "patch content doesn't match retainKeys list");
  }
  for (const k of Object.keys(original)) if (!keys.includes(k)) delete original[k];
}

function mergeList(original: unknown[], patch: unknown[], schema: Schema | undefined, order: unknown[] | undefined): unknown[] {
  const itemSchema = schema?.items;
  if (!patchStrategies(schema).includes('merge')) return patch.map((v) => (isObject(v) ? mergeMap({}, v, itemSchema) : v));
  if ([...original, ...patch].some(Array.isArray)) throw new PatchError('Unprocessable', 'lists of lists are not supported');
  const mapItems = [...original, ...patch].some(isObject);
  if (!mapItems) {
    const merged: unknown[] = [];
    for (const v of [...original, ...patch]) if (!merged.some((m) => jsonEqual(m, v))) merged.push(v);
    return normalizeOrder(merged, order ?? patch, original, undefined);
  }
  const key = patchMergeKey(schema);
  if (!key) throw bad(`cannot merge lists without merge key for ${schema?.items?.refName ?? 'the list'}`);
  const sameKey = (a: unknown, b: JsonObject): boolean => isObject(a) && jsonEqual(a[key], b[key]);

  let base = original;
  const items: JsonObject[] = [];
  let replace = false;
  for (const item of patch) {
    if (!isObject(item)) throw bad('invalid patch: a list of maps holds a non-map item');
    if (!hasKey(item, PATCH)) {
      items.push(item);
      continue;
    }
    switch (item[PATCH]) {
      case 'delete':
        if (!hasKey(item, key)) throw bad(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
        base = base.filter((o) => !sameKey(o, item));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw bad('merging lists cannot yet be specified in the patch');
      default:
        throw bad(`unknown patch type: ${String(item[PATCH])} in map: ${JSON.stringify(item)}`);
    }
  }
  if (replace) return items.map((i) => mergeMap({}, i, itemSchema));

  const merged = base.slice();
  for (const item of items) {
    if (!hasKey(item, key)) throw bad(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const at = merged.findIndex((o) => sameKey(o, item));
    if (at >= 0) merged[at] = mergeMap(isObject(merged[at]) ? (merged[at] as JsonObject) : {}, item, itemSchema);
    else merged.push(mergeMap({}, item, itemSchema));
  }
  return normalizeOrder(merged, order ?? items, base, key);
}

/**
 * Kubernetes' element order: items named in `order` come in that order; the others keep their
 * server order; the two runs are interleaved by server position where both items have one.
 */
function normalizeOrder(merged: unknown[], order: unknown[], server: unknown[], key: string | undefined): unknown[] {
  const id = (v: unknown): unknown => (key === undefined ? v : isObject(v) ? v[key] : undefined);
  const indexIn = (list: unknown[], v: unknown): number => list.findIndex((x) => jsonEqual(id(x), id(v)));
  const byIndex = (list: unknown[]) => (a: unknown, b: unknown) => indexIn(list, a) - indexIn(list, b);
  const named = merged.filter((m) => indexIn(order, m) >= 0).sort(byIndex(order));
  const serverOnly = merged.filter((m) => indexIn(order, m) < 0).sort(byIndex(server));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < named.length) {
    if (j >= named.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(named[j++]);
    else {
      const li = indexIn(server, serverOnly[i]);
      const ri = indexIn(server, named[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(named[j++]);
    }
  }
  return out;
}
