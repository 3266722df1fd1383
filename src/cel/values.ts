/**
 * JSON ⇄ CEL values. JSON has one number type; CEL has int, uint and double, and `1 + 1.0` is an
 * error in CEL. The kind's schema decides: an `integer` field becomes a CEL int (BigInt), a `number`
 * field a double (JS number). Where the schema says nothing (preserved unknown fields, int-or-string,
 * no schema at all) an integral number becomes an int and any other a double, as Kubernetes' decoding
 * of unstructured JSON does.
 */
import { Optional } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { escapeProperty } from './escaping.js';
import { propertySchema, type CelSchema } from './schema.js';

/**
 * Objects come out with a null prototype so a `__proto__` key stays an ordinary key.
 * `escaped` (a CRD's rules): the properties of an object the schema declares properties of are
 * keyed by their CEL names (escaping.ts), and a null one is absent, as Kubernetes' unstructured
 * values read them (`has(self.x)` is false and `self.x` no such key when x is null).
 */
export function jsonToCel(value: unknown, schema?: CelSchema, escaped = false): unknown {
  switch (typeof value) {
    case 'number':
      return numberToCel(value, schema);
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const items = schema?.items;
        return value.map((v) => jsonToCel(v, items, escaped));
      }
      const out: Record<string, unknown> = Object.create(null);
      const struct = escaped && schema?.properties !== undefined;
      for (const [k, v] of Object.entries(value)) {
        if (struct && v === null) continue;
        out[struct ? (escapeProperty(k) ?? k) : k] = jsonToCel(v, propertySchema(schema, k), escaped);
      }
      return out;
    }
    default:
      return value;
  }
}

function numberToCel(n: number, schema: CelSchema | undefined): unknown {
  if (schema?.type === 'number') return n;
  if (Number.isInteger(n)) return BigInt(n);
  return n;
}

/**
 * A CEL result as JSON (for mutations and audit annotations): ints and uints become numbers, bytes
 * base64, timestamps RFC 3339, durations their Go-style string, an empty optional is dropped, and
 * opaque library values (quantity, ip, url, …) use their toJSON.
 */
export function celToJson(value: unknown): unknown {
  switch (typeof value) {
    case 'bigint':
      return Number(value);
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map(celToJson).filter((v) => v !== undefined);
      if (value instanceof Optional) return value.hasValue() ? celToJson(value.value()) : undefined;
      if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Duration) return value.toString();
      if (value instanceof Map) {
        const out: Record<string, unknown> = {};
        for (const [k, v] of value) setJson(out, String(k), celToJson(v));
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== null && proto !== Object.prototype) {
        const withJson = value as { toJSON?: () => unknown; valueOf: () => unknown };
        if (typeof withJson.toJSON === 'function') return withJson.toJSON();
        const prim = withJson.valueOf();
        if (typeof prim === 'bigint') return Number(prim); // UnsignedInt
        return String(value);
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) setJson(out, k, celToJson(v));
      return out;
    }
    default:
      return value;
  }
}

function setJson(out: Record<string, unknown>, key: string, v: unknown): void {
  if (v === undefined) return;
  Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
}
