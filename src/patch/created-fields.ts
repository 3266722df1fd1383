/**
 * The FieldsV1 of a create's one managedFields entry, built in one walk of the object as the JSON it
 * is. On a create no one owns anything yet and nothing is modified or removed, so the manager's set
 * is every field the object sets, less what no write may own (managed-fields.ts: ownable). The
 * general path (compare into a trie, ownable, toFieldsV1) gives the same JSON; building the trie
 * and sorting it again was the largest CPU stage of a create.
 */
import type { Schema } from '../api/schema.js';
import { isObject, type JsonObject } from '../api/json-access.js';
import { itemElement } from './field-walk.js';
import { valueElement } from './field-set.js';
import { memberSchema, shapeOf } from './schema-shape.js';

/** Metadata no write owns (Kubernetes' stripMeta): the system sets it. */
export const SYSTEM_METADATA = ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'generation', 'managedFields', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

const SYSTEM_ELEMENTS = new Set(SYSTEM_METADATA.map((f) => `f:${f}`));

/** Top-level structs are never owned whole (ownable): an empty one owns nothing. */
const STRUCTS = new Set(['f:spec', 'f:status']);

/**
 * The node of a value at a path below the root: `{}` for a leaf, members behind a `.` for a granular
 * map; undefined when the walk inserts nothing there (null where a map or list goes, an empty list).
 * Throws PatchError for a keyed-list item without its key, as the general walk does; `at` is the
 * path's elements, for that message.
 */
function nodeOf(value: unknown, schema: Schema | undefined, at: string[]): JsonObject | undefined {
  if (value === undefined) return undefined;
  const shape = shapeOf(schema, value);
  if (shape === 'scalar' || shape === 'atomic') return {};
  if (value === null) return undefined;
  if (shape === 'granular') {
    if (!isObject(value)) return {};
    // A map that is set is a member itself: with members, FieldsV1 marks it with a `.`.
    const out: JsonObject = { '.': {} };
    let members = 0;
    for (const k of Object.keys(value).sort()) {
      at.push(`f:${k}`);
      const child = nodeOf(value[k], memberSchema(schema, k), at);
      at.pop();
      if (child !== undefined) {
        out[`f:${k}`] = child;
        members++;
      }
    }
    return members > 0 ? out : {};
  }
  if (!Array.isArray(value)) return {};
  const items = new Map<string, JsonObject>();
  if (shape === 'set') {
    for (const v of value) items.set(valueElement(v), {});
  } else {
    // The last of duplicate items wins, in the place of the first (itemsByElement).
    const byElement = new Map<string, unknown>();
    for (const item of value) byElement.set(itemElement(item, schema!, at), item);
    for (const [pe, item] of byElement) {
      at.push(pe);
      items.set(pe, nodeOf(item, schema!.items, at) ?? {});
      at.pop();
    }
  }
  if (items.size === 0) return undefined;
  const out: JsonObject = {};
  for (const pe of [...items.keys()].sort()) out[pe] = items.get(pe)!;
  return out;
}

/**
 * FieldsV1 of what a create by one manager owns, or undefined when it owns nothing. `obj` is the
 * object without its metadata.managedFields.
 */
export function createdFieldsV1(obj: JsonObject, schema: Schema, scope: { subresource?: 'status'; hasStatus: boolean }): JsonObject | undefined {
  const out: JsonObject = {};
  let owns = false;
  for (const k of Object.keys(obj).sort()) {
    const pe = `f:${k}`;
    // Walked even when not owned: a keyed-list item without its key anywhere means no managedFields.
    let node = nodeOf(obj[k], memberSchema(schema, k), [pe]);
    if (node === undefined || k === 'apiVersion' || k === 'kind') continue;
    if (scope.subresource === 'status' ? pe !== 'f:status' : scope.hasStatus && pe === 'f:status') continue;
    if (pe === 'f:metadata') {
      const meta: JsonObject = {};
      for (const [m, v] of Object.entries(node)) if (m !== '.' && !SYSTEM_ELEMENTS.has(m)) meta[m] = v;
      if (Object.keys(meta).length === 0) continue;
      node = meta;
    } else if ('.' in node) {
      // A top-level map is owned through its members only.
      const { '.': _member, ...members } = node;
      node = members;
    }
    if (!STRUCTS.has(pe) || Object.keys(node).length > 0) owns = true;
    out[pe] = node;
  }
  return owns ? out : undefined;
}
