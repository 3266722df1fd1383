/**
 * Validation ratcheting (KEP 4008, GA in Kubernetes 1.33): on an update, an error of the CRD's
 * schema is dropped when the value it was found in is unchanged, so a schema tightened after an
 * object was stored does not refuse writes that leave the old value alone (`kubectl label`).
 *
 * As apiextensions-apiserver correlates them (common.CorrelatedObject): the new and the stored
 * value are paired from the root through object properties, map values and the items of
 * x-kubernetes-list-type=map lists (by their keys); pairing stops at any other list item. An error
 * is dropped when the deepest paired value on its path equals its stored value. apiVersion and kind
 * are never ratcheted, nor an error that names no field (a composite error on `<nil>`).
 */
import type { FieldError } from '../../api/field-errors.js';
import { isObject, jsonEqual } from '../../api/json-access.js';
import type { Schema } from '../../api/schema.js';

export function ratchetSchemaErrors(errs: FieldError[], schema: Schema, obj: unknown, old: unknown): FieldError[] {
  if (old === undefined || errs.length === 0) return errs;
  return errs.filter((e) => !unchangedAt(e.field, schema, obj, old));
}

/** `spec.ports[1].port` → ['spec', 'ports', 1, 'port']; undefined for `<nil>`. */
function segments(field: string): (string | number)[] | undefined {
  if (field === '' || field === '<nil>') return undefined;
  const out: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1]) out.push(m[1]);
    for (const i of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

function unchangedAt(field: string, schema: Schema, obj: unknown, old: unknown): boolean {
  const path = segments(field);
  if (!path) return false;
  if (path[0] === 'apiVersion' || path[0] === 'kind') return false;
  let s: Schema | undefined = schema;
  let now: unknown = obj;
  let was: unknown = old;
  for (const seg of path) {
    let nextNow: unknown;
    let nextWas: unknown;
    if (typeof seg === 'number') {
      if (!Array.isArray(now) || !Array.isArray(was) || s?.['x-kubernetes-list-type'] !== 'map') break;
      nextNow = now[seg];
      nextWas = pairedItem(s, nextNow, was);
      s = s.items;
    } else {
      if (!isObject(now) || !isObject(was)) break;
      nextNow = now[seg];
      nextWas = was[seg];
      s = s?.properties?.[seg] ?? (isObject(s?.additionalProperties) ? (s.additionalProperties as Schema) : undefined);
    }
    if (nextNow === undefined || nextWas === undefined) break;
    now = nextNow;
    was = nextWas;
  }
  return jsonEqual(now, was);
}

function pairedItem(s: Schema, item: unknown, old: unknown[]): unknown {
  if (!isObject(item)) return undefined;
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const keyOf = (x: unknown) => (isObject(x) ? keys.map((k) => x[k]) : undefined);
  const key = keyOf(item);
  return old.find((o) => jsonEqual(keyOf(o), key));
}
