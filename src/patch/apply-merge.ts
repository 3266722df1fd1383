/**
 * The two value operations of server-side apply: merging an apply configuration into the live
 * object, and removing the fields an applier stopped applying.
 */
import type { Schema } from '../api/schema.js';
import { itemElement } from './field-walk.js';
import { FieldSet } from './field-set.js';
import { cloneJson, isObject, jsonEqual, setKey, type JsonObject } from '../api/json-access.js';
import { memberSchema, shapeOf } from './schema-shape.js';

/**
 * The configuration merged into the live value: scalars and atomic values are replaced, struct and
 * map members merged one by one, keyed-list items merged by key (new items appended), set values
 * added. A null in the configuration removes the field. Neither argument is changed.
 */
export function mergeApplied(live: unknown, config: unknown, schema: Schema | undefined, path: string[] = []): unknown {
  if (config === undefined) return cloneJson(live);
  if (config === null) return undefined;
  const shape = shapeOf(schema, config);
  if (shape === 'granular' && isObject(config)) {
    const out: JsonObject = isObject(live) ? cloneJson(live) : {};
    for (const [k, v] of Object.entries(config)) {
      const merged = mergeApplied(out[k], v, memberSchema(schema, k), [...path, k]);
      if (merged === undefined) delete out[k];
      else setKey(out, k, merged);
    }
    return out;
  }
  if (shape === 'set' && Array.isArray(config)) {
    const out = Array.isArray(live) ? cloneJson(live) : [];
    for (const v of config) if (!out.some((x) => jsonEqual(x, v))) out.push(cloneJson(v));
    return out;
  }
  if (shape === 'assoc' && Array.isArray(config)) {
    const out = Array.isArray(live) ? cloneJson(live) : [];
    const index = new Map<string, number>();
    out.forEach((item, i) => index.set(itemElement(item, schema!, path), i));
    for (const item of config) {
      const pe = itemElement(item, schema!, path);
      const at = index.get(pe);
      if (at === undefined) {
        index.set(pe, out.length);
        out.push(mergeApplied(undefined, item, schema!.items, path));
      } else {
        out[at] = mergeApplied(out[at], item, schema!.items, path);
      }
    }
    return out;
  }
  return cloneJson(config);
}

const owned = (s: FieldSet | undefined): boolean => s !== undefined && !s.isEmpty();

/**
 * Removes from value every path of `last` (what the applier owned before) that no set in `keep`
 * (its new configuration and every other manager) owns, itself or below. Maps and lists that only
 * held removed fields go too, unless someone owns them. Returns the pruned copy.
 */
export function prune(value: unknown, last: FieldSet, keep: FieldSet, schema: Schema | undefined): unknown {
  const shape = shapeOf(schema, value);
  if (shape === 'granular' && isObject(value)) {
    const out: JsonObject = cloneJson(value);
    for (const [pe, lastChild] of last.children) {
      if (!pe.startsWith('f:')) continue;
      const k = pe.slice(2);
      if (!(k in out)) continue;
      const next = pruneChild(out[k], lastChild, keep.child(pe), memberSchema(schema, k));
      if (next === undefined) delete out[k];
      else setKey(out, k, next);
    }
    return out;
  }
  if (shape === 'set' && Array.isArray(value)) {
    return value.filter((v) => {
      const pe = `v:${JSON.stringify(v)}`;
      const l = last.child(pe);
      return !(l?.member && !owned(keep.child(pe)));
    });
  }
  if (shape === 'assoc' && Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const pe = itemElement(item, schema!, []);
      const l = last.child(pe);
      if (!l) {
        out.push(item);
        continue;
      }
      const next = pruneChild(item, l, keep.child(pe), schema!.items);
      if (next !== undefined) out.push(next);
    }
    return out;
  }
  return value;
}

function pruneChild(value: unknown, last: FieldSet, keep: FieldSet | undefined, schema: Schema | undefined): unknown {
  if (last.member && !owned(keep)) return undefined;
  if (last.children.size === 0) return value;
  const next = prune(value, last, keep ?? new FieldSet(), schema);
  const wasEmpty = isEmptyContainer(value);
  if (!wasEmpty && isEmptyContainer(next) && !owned(keep)) return undefined;
  return next;
}

const isEmptyContainer = (v: unknown): boolean => (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0);
