/**
 * Field errors as Kubernetes reports them: a type, the path of the field, the bad value and a detail,
 * rendered as `spec.matchConditions[3].expression: Required value`.
 */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotFound'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  value?: unknown;
  detail?: string;
}

/** A field path built while descending: path('spec').child('rules').index(3).child('expression'). */
export class FieldPath {
  private constructor(private readonly text: string) {}
  static root(name: string): FieldPath {
    return new FieldPath(name);
  }
  child(name: string, ...more: string[]): FieldPath {
    let p: FieldPath = new FieldPath(this.text ? `${this.text}.${name}` : name);
    for (const m of more) p = p.child(m);
    return p;
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }
  toString(): string {
    return this.text;
  }
}

/**
 * A bad value as kube-apiserver 1.36 prints it (apimachinery field.Error.ErrorBody): a string as
 * Go's %q, a bool or a float64 as %v (a float64 in %g form: `1.2345675e+06`), anything else as
 * json.Marshal writes it, which escapes <, >, & and the line separators (`{"Rule":"self.a \u003c 5"}`).
 * An integral JSON number decodes to int64 there, printed as its digits.
 */
const describe = (v: unknown): string => {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v)) return goFloat(v);
  return goJson(v) ?? String(v);
};
const goJson = (v: unknown): string | undefined => JSON.stringify(v)?.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const GO_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };

/** strconv.Quote: printable runes as they are; the rest escaped (\n, \x01, \u200b, \U000e0001). */
function goQuote(s: string): string {
  const body = s.replace(/["\\]|[^\P{C}]|[^\P{Z} ]/gu, (c) => {
    const named = GO_ESCAPES[c];
    if (named) return named;
    const cp = c.codePointAt(0)!;
    if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, '0')}`;
    return cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
  });
  return `"${body}"`;
}

/** fmt's %v of a float64: the shortest digits, in exponent form below 1e-4 or from 1e6 (e+06, two digits at least). */
function goFloat(n: number): string {
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e >= -4 && e < 6) return String(n);
  return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

export const required = (p: FieldPath, detail = ''): FieldError => ({ type: 'FieldValueRequired', field: String(p), detail });
export const invalid = (p: FieldPath, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field: String(p), value, detail });
export const notSupported = (p: FieldPath, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field: String(p),
  value,
  detail: `supported values: ${allowed.map(goQuote).join(', ')}`,
});
export const duplicate = (p: FieldPath, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: String(p), value });
export const forbidden = (p: FieldPath, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: String(p), detail });
export const tooLong = (p: FieldPath, value: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: String(p),
  value,
  detail: `may not be more than ${max} bytes`,
});
export const tooMany = (p: FieldPath, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: String(p),
  value: actual,
  detail: `must have at most ${max} items`,
});
export const typeInvalid = (p: FieldPath, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field: String(p), value, detail });

const reasonText: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotFound: 'Not found',
  InternalError: 'Internal error',
};

/** The message Kubernetes prints for one field error. */
export function formatFieldError(e: FieldError): string {
  const head = `${e.field}: ${reasonText[e.type]}`;
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'InternalError':
      return e.detail ? `${head}: ${e.detail}` : head;
    case 'FieldValueTooMany':
      return `${head}: ${e.value}: ${e.detail}`;
    default:
      return e.value === undefined ? `${head}${e.detail ? `: ${e.detail}` : ''}` : `${head}: ${describe(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
  }
}

/** Name formats, for the configuration files' checks (config may import resources, not selectors). */
export { isDNS1123Label, isDNS1123Subdomain, regexError } from './name-formats.js';
