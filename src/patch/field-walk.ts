/**
 * Field sets read off objects through their schema: which fields a value sets (toFieldSet, what an
 * apply configuration claims) and which fields differ between two versions of an object (compare,
 * what an update changed). Leaves are scalars and atomic values; keyed-list items and set values
 * are members in their own right, so an item can be owned (and removed) as a whole.
 */
import type { Schema } from '../api/schema.js';
import { PatchError } from './errors.js';
import { fieldElement, FieldSet, keyElement, valueElement } from './field-set.js';
import { isObject, jsonEqual } from '../api/json-access.js';
import { listKeys, memberSchema, shapeOf } from './schema-shape.js';

export function itemElement(item: unknown, schema: Schema, at: readonly string[]): string {
  const keys = listKeys(schema);
  const pe = keyElement(item, keys);
  if (pe === undefined) {
    const where = at.length ? at.join('.') : 'the object';
    throw new PatchError('BadPatch', `associative list with keys has an element that omits key field ${JSON.stringify(keys.find((k) => !isObject(item) || item[k] == null) ?? keys[0])} (at ${where})`);
  }
  return pe;
}

/** Items of a keyed list by their path element (the last of duplicates wins). */
export function itemsByElement(list: unknown, schema: Schema, at: readonly string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (Array.isArray(list)) for (const item of list) out.set(itemElement(item, schema, at), item);
  return out;
}

/** The fields a value sets: what an apply configuration claims. */
export function toFieldSet(value: unknown, schema: Schema | undefined): FieldSet {
  const set = new FieldSet();
  walkSet(value, schema, [], set);
  return set;
}

function walkSet(value: unknown, schema: Schema | undefined, path: string[], set: FieldSet): void {
  const shape = shapeOf(schema, value);
  if (value === null || value === undefined || shape === 'scalar' || shape === 'atomic') {
    if (path.length > 0) set.insert(path);
    return;
  }
  if (shape === 'granular') {
    if (!isObject(value)) return set.insert(path);
    for (const [k, v] of Object.entries(value)) walkSet(v, memberSchema(schema, k), [...path, fieldElement(k)], set);
    return;
  }
  if (!Array.isArray(value)) return set.insert(path);
  if (shape === 'set') {
    for (const v of value) set.insert([...path, valueElement(v)]);
    return;
  }
  for (const [pe, item] of itemsByElement(value, schema!, path)) {
    const itemPath = [...path, pe];
    set.insert(itemPath);
    walkSet(item, schema!.items, itemPath, set);
  }
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * What changed from `before` to `after`: leaves and items that appeared, changed value, or went
 * away. A granular map that appears or goes away is itself added or removed too (a `.` in
 * FieldsV1), as Kubernetes records for maps that were absent before.
 */
export function compare(before: unknown, after: unknown, schema: Schema | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walkCompare(before, after, schema, [], c);
  return c;
}

/** A leaf at path (not the root) that appeared, went away or changed value. */
function compareLeaf(before: unknown, after: unknown, path: string[], c: Comparison): void {
  if (path.length === 0 || before === after) return;
  if (before === undefined) c.added.insert(path);
  else if (after === undefined) c.removed.insert(path);
  else if (!jsonEqual(before, after)) c.modified.insert(path);
}

/**
 * One path array, pushed and popped on the way down (FieldSet.insert copies what it keeps), and no
 * closure per node: an update's compare walks the whole object twice over, and the copies were most
 * of its garbage.
 */
function walkCompare(before: unknown, after: unknown, schema: Schema | undefined, path: string[], c: Comparison): void {
  if (before === undefined && after === undefined) return;
  const shape = shapeOf(schema, after ?? before);
  if (shape === 'scalar' || shape === 'atomic') return compareLeaf(before, after, path, c);
  if (shape === 'granular') {
    const b = isObject(before) ? before : undefined;
    const a = isObject(after) ? after : undefined;
    if ((before !== undefined && before !== null && !b) || (after !== undefined && after !== null && !a)) return compareLeaf(before, after, path, c);
    if (path.length > 0 && !b && a) c.added.insert(path);
    if (path.length > 0 && b && !a) c.removed.insert(path);
    if (b) for (const k in b) walkMember(b[k], a?.[k], schema, k, path, c);
    if (a) for (const k in a) if (!b || !Object.prototype.hasOwnProperty.call(b, k)) walkMember(undefined, a[k], schema, k, path, c);
    return;
  }
  if ((before != null && !Array.isArray(before)) || (after != null && !Array.isArray(after))) return compareLeaf(before, after, path, c);
  if (shape === 'set') {
    const b = (before ?? []) as unknown[];
    const a = (after ?? []) as unknown[];
    for (const v of a) if (!b.some((x) => jsonEqual(x, v))) c.added.insert([...path, valueElement(v)]);
    for (const v of b) if (!a.some((x) => jsonEqual(x, v))) c.removed.insert([...path, valueElement(v)]);
    return;
  }
  const b = itemsByElement(before, schema!, path);
  const a = itemsByElement(after, schema!, path);
  for (const pe of new Set([...b.keys(), ...a.keys()])) {
    path.push(pe);
    if (!b.has(pe)) c.added.insert(path);
    if (!a.has(pe)) c.removed.insert(path);
    walkCompare(b.get(pe), a.get(pe), schema!.items, path, c);
    path.pop();
  }
}

function walkMember(before: unknown, after: unknown, schema: Schema | undefined, key: string, path: string[], c: Comparison): void {
  path.push(fieldElement(key));
  walkCompare(before, after, memberSchema(schema, key), path, c);
  path.pop();
}
