/**
 * Object construction for mutating policies. The parser never sees `Type{…}`: struct-literals.ts
 * rewrites it to `__orchd_struct("Type", {fields})`, checked against the schema there, and this
 * function builds the value: a plain object of the fields, which the caller merges (ApplyConfiguration)
 * or applies (JSONPatch). Also Kubernetes' jsonpatch.escapeKey for JSON Pointer tokens.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { STRUCT_FUNCTION } from '../struct-literals.js';
import { sync } from './common.js';

class JsonPatchNamespace {}

export function registerObjects(env: Environment): void {
  env.registerFunction(
    `${STRUCT_FUNCTION}(string, map): map`,
    (typeName: string, fields: Record<string, unknown> | Map<string, unknown>) => {
      const out: Record<string, unknown> = Object.create(null);
      const entries = fields instanceof Map ? [...fields.entries()] : Object.entries(fields);
      for (const [k, v] of entries) out[k] = v;
      Object.defineProperty(out, STRUCT_TYPE, { value: typeName, enumerable: false });
      return out;
    },
    sync,
  );
  env.registerType('JsonPatchNamespace', JsonPatchNamespace);
  env.registerConstant('jsonpatch', 'JsonPatchNamespace', new JsonPatchNamespace());
  env.registerFunction('JsonPatchNamespace.escapeKey(string): string', (_: unknown, k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1'), sync);
}

/** The type name of a constructed object (a non-enumerable mark), or undefined for a plain map. */
export const STRUCT_TYPE = Symbol('celStructType');

export function structTypeOf(v: unknown): string | undefined {
  return typeof v === 'object' && v !== null ? (v as { [STRUCT_TYPE]?: string })[STRUCT_TYPE] : undefined;
}
