/**
 * JSON ⇄ CEL values. JSON has one number type; CEL has int, uint and double, and `1 + 1.0` is an
 * error in CEL. The kind's schema decides: an `integer` field becomes a CEL int (BigInt), a `number`
 * field a double (JS number). Where the schema says nothing (preserved unknown fields, int-or-string,
 * no schema at all) an integral number becomes an int and any other a double, as Kubernetes' decoding
 * of unstructured JSON does.
 */
import { Optional } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { escapeProperty, isReservedWord } from './escaping.js';
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
    case 'string':
      return escaped && schema?.type === 'string' && schema.format !== undefined ? formattedToCel(value, schema.format) : value;
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
        const converted = jsonToCel(v, propertySchema(schema, k), escaped);
        out[struct ? (escapeProperty(k) ?? k) : k] = converted;
        // A reserved word is reachable as itself too (`self.namespace`, as kube-apiserver 1.31+ reads it).
        if (struct && isReservedWord(k)) out[k] = converted;
      }
      return out;
    }
    default:
      return value;
  }
}

/**
 * A CRD rule's string of format byte, date, date-time or duration, as Kubernetes' UnstructuredToVal
 * reads it: bytes (base64), a timestamp (a date at midnight UTC), a duration. One that does not
 * parse stays a string, so a rule using it fails to evaluate, as Kubernetes' error value does.
 */
function formattedToCel(v: string, format: string): unknown {
  switch (format) {
    case 'byte':
      return /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0 ? new Uint8Array(Buffer.from(v, 'base64')) : v;
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) ? new Date(`${v}T00:00:00Z`) : v;
    case 'date-time': {
      const t = Date.parse(v);
      return Number.isNaN(t) ? v : new Date(t);
    }
    case 'duration':
      return parseDuration(v) ?? v;
    default:
      return v;
  }
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
  w: 604_800_000_000_000n,
};

/** A Go duration (`1h30m`, `-1.5s`), with strfmt's days and weeks; undefined when it does not parse. */
function parseDuration(text: string): Duration | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d|w))+$/.exec(text);
  if (!m && text !== '0') return undefined;
  let nanos = 0n;
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d|w)/g)) {
    const [whole = '0', frac = ''] = part[1]!.split('.');
    const unit = DURATION_UNITS[part[2]!]!;
    nanos += BigInt(whole || '0') * unit + (BigInt((frac.slice(0, 18) || '0').padEnd(18, '0')) * unit) / 10n ** 18n;
  }
  if (m?.[1] === '-') nanos = -nanos;
  return new Duration(nanos / 1_000_000_000n, Number(nanos % 1_000_000_000n));
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
