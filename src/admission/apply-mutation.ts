/**
 * Applying the value a mutation's expression yielded to the object, as Kubernetes' policy patchers
 * do. ApplyConfiguration: an `Object{…}` merged with server-side apply rules (maps and structs
 * member by member, keyed lists by their keys, sets by value); atomic lists, maps and structs may
 * not appear in it, since merging would silently drop what the configuration leaves out; nothing
 * is recorded in managedFields. JSONPatch: a list of `JSONPatch{…}` applied per RFC 6902; a failed
 * `test` leaves the object as it was. Errors are worded as Kubernetes words them.
 */
import { celToJson, structTypeOf } from '../cel/index.js';
import { mergeApplied } from '../patch/apply-merge.js';
import { PatchError } from '../patch/errors.js';
import { applyJsonPatch, TestFailedError } from '../patch/json-patch.js';
import { isObject } from '../api/json-access.js';
import { memberSchema, shapeOf } from '../patch/schema-shape.js';
import type { Schema } from '../api/schema.js';
import type { KubeObject } from '../api/types.js';
import type { PatchType } from './compile-mutating-policy.js';

/** The patched copy of object; object itself is never changed. Throws an Error with the reason. */
export function applyMutation(patchType: PatchType, value: unknown, object: KubeObject, schema: Schema): KubeObject {
  return patchType === 'ApplyConfiguration' ? applyConfiguration(value, object, schema) : jsonPatch(value, object);
}

function applyConfiguration(value: unknown, object: KubeObject, schema: Schema): KubeObject {
  const typeName = structTypeOf(value);
  if (typeName !== 'Object') throw new Error(`unsupported return type from ApplyConfiguration expression: ${typeName ?? celTypeOf(value)}`);
  checkTypeNames(value, 'Object');
  const config = celToJson(value);
  const atomics = atomicPaths(config, schema, '');
  if (atomics.length > 0) throw new Error(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  return mergeApplied(object, config, schema) as KubeObject;
}

function jsonPatch(value: unknown, object: KubeObject): KubeObject {
  if (!Array.isArray(value)) throw new Error('type mismatch: JSONPatchType.expression should evaluate to array');
  const ops = value.map((v) => {
    if (structTypeOf(v) !== 'JSONPatch') throw new Error(`type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of ${celTypeOf(v)}`);
    const fields = v as Record<string, unknown>;
    const valueType = structTypeOf(fields.value);
    if (valueType !== undefined) checkTypeNames(fields.value, valueType);
    return {
      op: fields.op ?? '',
      path: fields.path ?? '',
      ...(typeof fields.from === 'string' && fields.from !== '' ? { from: fields.from } : {}),
      // A null value is a value (JSON null); only an unset one is left out.
      ...(Object.hasOwn(fields, 'value') ? { value: celToJson(fields.value) } : {}),
    };
  });
  let patched: unknown;
  try {
    patched = applyJsonPatch(object, ops);
  } catch (err) {
    if (err instanceof TestFailedError) return object;
    if (err instanceof PatchError) throw new Error(`JSONPath: ${err.message}`);
    throw err;
  }
  if (!isObject(patched)) throw new Error('JSONPath: the patched document is not an object');
  return patched as KubeObject;
}

/**
 * An object built inside `Object{…}` must be named for its field path from the root:
 * `Object{spec: Object.spec{…}}`, not `Object{spec: Object.metadata{…}}`. Lists and maps in
 * between are unnamed.
 */
function checkTypeNames(value: unknown, expected: string): void {
  const errors: string[] = [];
  const walk = (v: unknown, path: string): void => {
    const name = structTypeOf(v);
    if (name !== undefined && name !== path) errors.push(`unexpected type name "${name}", expected "${path}", which matches field name path from root Object type`);
    if (Array.isArray(v)) for (const item of v) walk(item, path);
    else if (v instanceof Map) for (const item of v.values()) walk(item, path);
    else if (name !== undefined) for (const [k, f] of Object.entries(v as object)) walk(f, `${path}.${k}`);
    else if (isObject(v) && Object.getPrototypeOf(v) === null) for (const item of Object.values(v)) walk(item, path);
  };
  walk(value, expected);
  if (errors.length > 0) throw new Error(`type mismatch: ${errors.join('\n')}`);
}

/** Where the configuration sets an atomic list, map or struct, as structured-merge-diff prints paths. */
function atomicPaths(value: unknown, schema: Schema | undefined, path: string): string[] {
  if (!schema || schema['x-kubernetes-preserve-unknown-fields']) return [];
  const out: string[] = [];
  const atomic = shapeOf(schema, value) === 'atomic';
  if (isObject(value)) {
    if (atomic) out.push(path);
    for (const [k, v] of Object.entries(value)) out.push(...atomicPaths(v, memberSchema(schema, k), `${path}.${k}`));
  } else if (Array.isArray(value)) {
    if (atomic) out.push(path);
    value.forEach((v, i) => out.push(...atomicPaths(v, schema.items, `${path}[${i}]`)));
  }
  return out;
}

/** A value's CEL type name, for messages. */
function celTypeOf(v: unknown): string {
  if (v === null) return 'null_type';
  if (Array.isArray(v)) return 'list';
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'object':
      return 'map';
    default:
      return typeof v;
  }
}
