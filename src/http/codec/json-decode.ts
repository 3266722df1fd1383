/**
 * JSON request bodies, decoded the way Kubernetes decodes them: strict RFC 8259 (exactly what
 * JSON.parse accepts, with the same values), plus the duplicate keys that JSON.parse silently
 * swallows. Kubernetes (sigs.k8s.io/json) keeps the last value of a duplicate and reports it as
 * `duplicate field "metadata.name"`, list items as `spec.validations[0].expression`; fieldValidation
 * then decides whether that is ignored, a warning or a 400.
 *
 * Hostile nesting ends in a clear error at MAX_DEPTH, never in a stack overflow. Objects are plain
 * objects, like JSON.parse's, but a `"__proto__"` key becomes an own data property, as JSON.parse
 * makes it: it never replaces the prototype.
 */
import { FieldPath } from '../../api/field-errors.js';

/**
 * Deepest nesting of objects and arrays a body may have. Go's encoding/json, and so Kubernetes,
 * allows 10,000, but in Node everything after decoding (JSON.stringify, structuredClone, msgpack,
 * any recursive walk) overflows the default stack at a few thousand levels: measured at about
 * 5,000 in a fresh process, fewer inside a request. 1,000 is far beyond any real object (a deep
 * CRD schema is some 30 levels) and keeps those later stages safe.
 */
export const MAX_DEPTH = 1000;

/** Kubernetes stops collecting strict-decoding errors at 100; so do we (a hostile body may hold millions). */
const MAX_DUPLICATES = 100;

/** Malformed JSON, worded as Go's encoding/json words it, with the offset (UTF-16 units) where it went wrong. */
export class JsonSyntaxError extends SyntaxError {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {
    super(`${reason} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
  }
}

export interface Decoded {
  value: unknown;
  /** `duplicate field "<path>"` per duplicated key, in document order, each once, at most 100. */
  duplicates: string[];
}

const duplicateFieldMessage = (path: string): string => `duplicate field ${JSON.stringify(path)}`;

/** Collects duplicate-field messages the way Kubernetes does: each path once, at most 100. */
export class DuplicateFields {
  readonly messages: string[] = [];
  private readonly seen = new Set<string>();
  add(path: string): void {
    if (this.messages.length >= MAX_DUPLICATES || this.seen.has(path)) return;
    this.seen.add(path);
    this.messages.push(duplicateFieldMessage(path));
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * A run of string characters that need no attention: not a quote, a backslash or a control
 * character. Sticky, so it matches exactly at lastIndex; V8 runs it natively, which is what
 * keeps strings (most of a Kubernetes object) near JSON.parse's speed.
 */
const PLAIN = /[^"\\\x00-\x1f]*/y;

/**
 * Sets obj[key] = value as JSON.parse does (an own, enumerable data property, `__proto__` included)
 * and says whether the key was already there.
 */
export function setField(obj: Record<string, unknown>, key: string, value: unknown): boolean {
  const dup = hasOwn.call(obj, key);
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
  return dup;
}

const WS_SPACE = 0x20;
const WS_TAB = 0x09;
const WS_LF = 0x0a;
const WS_CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Go's quoteChar: how encoding/json shows the offending character. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === QUOTE) return `'"'`;
  const s = JSON.stringify(String.fromCharCode(c));
  return `'${s.slice(1, -1)}'`;
}

const ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };

/** Value of a hex digit, or -1. */
function hexDigit(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x61 + 10 : -1;
}

/**
 * Decodes text as JSON.parse would, also reporting duplicate keys. Throws JsonSyntaxError for
 * malformed input and for nesting deeper than maxDepth.
 *
 *   decodeJson('{"metadata":{"name":"a","name":"b"}}')
 *     → { value: { metadata: { name: 'b' } }, duplicates: ['duplicate field "metadata.name"'] }
 *
 * Recursive descent, one call per open container: maxDepth bounds the recursion, and 1,000 small
 * frames are a fraction of Node's stack (the check runs before each call, so hostile nesting gets
 * the error, never a RangeError). Long: the cursor and the duplicate list are locals of this one
 * closure, shared by the nested readers of values, objects and arrays.
 */
export function decodeJson(text: string, maxDepth: number = MAX_DEPTH): Decoded {
  const n = text.length;
  let i = 0;
  let depth = 0;
  // Keys and indices leading to the container being filled; read only to word a duplicate's path.
  const trail: (string | number)[] = [];
  let dups: DuplicateFields | undefined;

  const fail = (reason: string, at: number): never => {
    throw new JsonSyntaxError(reason, at);
  };
  const unexpected = (context: string): never => (i >= n ? fail('unexpected end of JSON input', n) : fail(`invalid character ${quoteChar(text.charCodeAt(i))} ${context}`, i));

  const skipWs = (): number => {
    let c = text.charCodeAt(i);
    while (c === WS_SPACE || c === WS_LF || c === WS_CR || c === WS_TAB) c = text.charCodeAt(++i);
    return c;
  };

  const readString = (): string => {
    // i is on the opening quote. The common case (no escapes) is one native regex step and one slice.
    const start = ++i;
    PLAIN.lastIndex = i;
    PLAIN.test(text);
    i = PLAIN.lastIndex;
    if (text.charCodeAt(i) === QUOTE) return text.slice(start, i++);
    return readEscaped(start);
  };

  const readEscaped = (start: number): string => {
    let out = text.slice(start, i);
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i++;
        return out;
      }
      // A raw control character, or NaN past the end.
      if (c !== BACKSLASH) return unexpected('in string literal');
      const e = text.charCodeAt(++i);
      const simple = ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
      } else if (e === 0x75) {
        let code = 0;
        for (let k = 0; k < 4; k++) {
          const d = hexDigit(text.charCodeAt(++i));
          if (d < 0) return unexpected('in \\u hexadecimal character escape');
          code = code * 16 + d;
        }
        // Lone surrogates pass through as JSON.parse lets them.
        out += String.fromCharCode(code);
      } else {
        return unexpected('in string escape code');
      }
      const run = ++i;
      PLAIN.lastIndex = i;
      PLAIN.test(text);
      i = PLAIN.lastIndex;
      out += text.slice(run, i);
    }
  };

  const readNumber = (): number => {
    const start = i;
    let c = text.charCodeAt(i);
    if (c === MINUS) c = text.charCodeAt(++i);
    if (c === ZERO) {
      c = text.charCodeAt(++i);
    } else if (c > ZERO && c <= NINE) {
      do c = text.charCodeAt(++i);
      while (c >= ZERO && c <= NINE);
    } else {
      return unexpected('in numeric literal');
    }
    if (c === 0x2e) {
      c = text.charCodeAt(++i);
      if (!(c >= ZERO && c <= NINE)) return unexpected('after decimal point in numeric literal');
      do c = text.charCodeAt(++i);
      while (c >= ZERO && c <= NINE);
    }
    if (c === 0x65 || c === 0x45) {
      c = text.charCodeAt(++i);
      if (c === 0x2b || c === MINUS) c = text.charCodeAt(++i);
      if (!(c >= ZERO && c <= NINE)) return unexpected('in exponent of numeric literal');
      do c = text.charCodeAt(++i);
      while (c >= ZERO && c <= NINE);
    }
    // The grammar is checked above; Number() then gives exactly JSON.parse's value (1e400 → Infinity).
    return Number(text.slice(start, i));
  };

  const readLiteral = (word: string, value: boolean | null): boolean | null => {
    for (let k = 1; k < word.length; k++) {
      if (text.charCodeAt(i + k) !== word.charCodeAt(k)) {
        i += k;
        return unexpected(`in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
      }
    }
    i += word.length;
    return value;
  };

  const readValue = (c: number): unknown => {
    if (c === QUOTE) return readString();
    if (c === OPEN_OBJ) return readObject();
    if (c === OPEN_ARR) return readArray();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return readNumber();
    if (c === 0x74) return readLiteral('true', true);
    if (c === 0x66) return readLiteral('false', false);
    if (c === 0x6e) return readLiteral('null', null);
    return unexpected('looking for beginning of value');
  };

  const enter = (): void => {
    if (++depth > maxDepth) fail(`exceeded max depth of ${maxDepth}`, i);
    i++;
  };

  const readObject = (): Record<string, unknown> => {
    enter();
    const obj: Record<string, unknown> = {};
    let c = skipWs();
    if (c === CLOSE_OBJ) {
      i++;
      depth--;
      return obj;
    }
    for (;;) {
      if (c !== QUOTE) unexpected('looking for beginning of object key string');
      const key = readString();
      if (skipWs() !== COLON) unexpected('after object key');
      i++;
      c = skipWs();
      let value: unknown;
      if (c === OPEN_OBJ || c === OPEN_ARR) {
        trail.push(key);
        value = c === OPEN_OBJ ? readObject() : readArray();
        trail.pop();
      } else {
        value = readValue(c);
      }
      if (setField(obj, key, value)) (dups ??= new DuplicateFields()).add(pathOf(trail, key));
      c = skipWs();
      if (c === COMMA) {
        i++;
        c = skipWs();
      } else if (c === CLOSE_OBJ) {
        i++;
        depth--;
        return obj;
      } else {
        unexpected('after object key:value pair');
      }
    }
  };

  const readArray = (): unknown[] => {
    enter();
    const arr: unknown[] = [];
    let c = skipWs();
    if (c === CLOSE_ARR) {
      i++;
      depth--;
      return arr;
    }
    for (;;) {
      if (c === OPEN_OBJ || c === OPEN_ARR) {
        trail.push(arr.length);
        arr.push(c === OPEN_OBJ ? readObject() : readArray());
        trail.pop();
      } else {
        arr.push(readValue(c));
      }
      c = skipWs();
      if (c === COMMA) {
        i++;
        c = skipWs();
      } else if (c === CLOSE_ARR) {
        i++;
        depth--;
        return arr;
      } else {
        unexpected('after array element');
      }
    }
  };

  const value = readValue(skipWs());
  skipWs();
  if (i < n) unexpected('after top-level value');
  return { value, duplicates: dups ? dups.messages : [] };
}

/** `spec.validations[0].expression` from the keys and indices above a key. */
function pathOf(trail: readonly (string | number)[], key: string): string {
  let p = FieldPath.root('');
  for (const step of trail) p = typeof step === 'number' ? p.index(step) : p.child(step);
  return String(p.child(key));
}
