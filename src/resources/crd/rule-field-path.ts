/**
 * The paths a CRD names fields by: a rule's fieldPath (`.spec.replicas`, `.labels['app.kubernetes.io/name']`),
 * a selectable field or a scale subresource's replica paths (`.spec.replicas`, no brackets there).
 * Parsed into field names, checked against the schema when one is given (each step a declared
 * property, or a key of a map).
 */
import { isObject } from '../../api/json-access.js';
import type { Schema } from '../../api/schema.js';

const UNESCAPE: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

/** The field names of a path, or undefined when it is not one (or names no field of schema). */
export function parseRuleFieldPath(path: string, schema?: Schema, o: { brackets?: boolean } = {}): string[] | undefined {
  const names: string[] = [];
  let i = 0;
  let s = schema;
  const step = (name: string): boolean => {
    names.push(name);
    if (!schema) return true;
    const declared = s?.properties && Object.hasOwn(s.properties, name) ? s.properties[name] : undefined;
    if (declared) s = declared;
    else if (isObject(s?.additionalProperties) && !s?.properties) s = s.additionalProperties;
    else return false;
    return true;
  };
  if (path === '') return undefined;
  while (i < path.length) {
    if (path[i] === '.') {
      const m = /^[^.[\]]+/.exec(path.slice(i + 1));
      if (!m || !step(m[0])) return undefined;
      i += 1 + m[0].length;
    } else if (path[i] === '[' && o.brackets !== false) {
      const m = /^\['((?:[^'\\]|\\.)*)'\]/.exec(path.slice(i));
      if (!m) return undefined;
      let bad = false;
      const name = m[1]!.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? ((bad = true), ''));
      if (bad || !step(name)) return undefined;
      i += m[0].length;
    } else return undefined;
  }
  return names;
}

/** The value at a dotted path of an object (undefined when absent on the way). */
export function valueAtPath(obj: unknown, names: readonly string[]): unknown {
  let v = obj;
  for (const n of names) {
    if (!isObject(v)) return undefined;
    v = v[n];
  }
  return v;
}
