/**
 * The JSONPath of kubectl's templates (client-go's jsonpath), as a CRD's additionalPrinterColumns
 * use it: `.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`, `.spec.ports[0].port`,
 * `.items[*].name`, `..name`, `['a.b']`. Compiled once per column into steps; evaluating one on an
 * object gives every value it reaches, in order (a column shows the first).
 */
import { isObject } from '../../api/json-access.js';

type Filter = { path: string[]; op?: '==' | '!=' | '<' | '<=' | '>' | '>='; value?: unknown };
type Step =
  | { kind: 'field'; name: string }
  | { kind: 'all' }
  | { kind: 'recursive'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'filter'; filter: Filter };

export class JsonPathError extends Error {}

/** The steps of a path (braces around it, as kubectl writes `{.spec}`, are allowed). */
export function compileJsonPath(text: string): Step[] {
  let src = text.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  const steps: Step[] = [];
  let i = 0;
  const name = () => {
    const m = /^[^.[\]\s]+/.exec(src.slice(i));
    if (!m) throw new JsonPathError(`unrecognized identifier at ${i} in ${text}`);
    i += m[0].length;
    return m[0];
  };
  while (i < src.length) {
    if (src.startsWith('..', i)) {
      i += 2;
      steps.push({ kind: 'recursive', name: name() });
    } else if (src[i] === '.') {
      i++;
      if (i >= src.length) break; // a lone "." is the object itself
      if (src[i] === '*') {
        i++;
        steps.push({ kind: 'all' });
      } else steps.push({ kind: 'field', name: name() });
    } else if (src[i] === '[') {
      const end = closing(src, i);
      steps.push(bracket(src.slice(i + 1, end).trim(), text));
      i = end + 1;
    } else throw new JsonPathError(`unexpected ${JSON.stringify(src[i])} in ${text}`);
  }
  return steps;
}

/** The index of the `]` closing the bracket at start (quotes and parentheses inside skipped). */
function closing(src: string, start: number): number {
  let quote: string | undefined;
  let depth = 0;
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ']' && depth === 0) return i;
  }
  throw new JsonPathError(`unclosed [ in ${src}`);
}

function bracket(inner: string, text: string): Step {
  if (inner === '*') return { kind: 'all' };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { kind: 'field', name: quoted[2]! };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const slice = /^(-?\d+)?:(-?\d+)?$/.exec(inner);
  if (slice) return { kind: 'slice', ...(slice[1] ? { start: Number(slice[1]) } : {}), ...(slice[2] ? { end: Number(slice[2]) } : {}) };
  const filter = /^\?\(\s*@((?:\.[^.\s=!<>)]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$/.exec(inner);
  if (filter) {
    const path = filter[1]!.split('.').filter(Boolean);
    return { kind: 'filter', filter: { path, ...(filter[2] ? { op: filter[2] as Filter['op'], value: literal(filter[3]!, text) } : {}) } };
  }
  throw new JsonPathError(`unrecognized [${inner}] in ${text}`);
}

function literal(src: string, text: string): unknown {
  const quoted = /^(['"])(.*)\1$/.exec(src.trim());
  if (quoted) return quoted[2];
  if (src.trim() === 'true' || src.trim() === 'false') return src.trim() === 'true';
  const n = Number(src);
  if (!Number.isNaN(n)) return n;
  throw new JsonPathError(`unrecognized value ${src} in ${text}`);
}

const children = (v: unknown): unknown[] => (Array.isArray(v) ? v : isObject(v) ? Object.values(v) : []);

function passes(item: unknown, f: Filter): boolean {
  let v: unknown = item;
  for (const n of f.path) v = isObject(v) ? v[n] : undefined;
  if (!f.op) return v !== undefined && v !== null;
  switch (f.op) {
    case '==':
      return v === f.value;
    case '!=':
      return v !== f.value;
    default: {
      if (typeof v !== typeof f.value || (typeof v !== 'number' && typeof v !== 'string')) return false;
      const [a, b] = [v as number | string, f.value as number | string];
      return f.op === '<' ? a < b : f.op === '<=' ? a <= b : f.op === '>' ? a > b : a >= b;
    }
  }
}

function recursive(v: unknown, name: string, out: unknown[]): void {
  if (isObject(v) && Object.hasOwn(v, name)) out.push(v[name]);
  for (const c of children(v)) recursive(c, name, out);
}

/** Every value the path reaches in obj (missing keys reach nothing). */
export function evaluateJsonPath(steps: readonly Step[], obj: unknown): unknown[] {
  let current: unknown[] = [obj];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      switch (step.kind) {
        case 'field':
          if (isObject(v) && Object.hasOwn(v, step.name)) next.push(v[step.name]);
          break;
        case 'all':
          next.push(...children(v));
          break;
        case 'recursive':
          recursive(v, step.name, next);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const at = step.index < 0 ? v.length + step.index : step.index;
            if (at >= 0 && at < v.length) next.push(v[at]);
          }
          break;
        case 'slice':
          if (Array.isArray(v)) next.push(...v.slice(step.start, step.end));
          break;
        case 'filter':
          next.push(...(Array.isArray(v) ? v : [v]).filter((item) => passes(item, step.filter)));
          break;
      }
    }
    current = next;
  }
  return current;
}

/** A value as kubectl's template prints it: strings as they are, other values as JSON. */
export const printed = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
