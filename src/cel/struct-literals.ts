/**
 * CEL object construction, `Object.spec{replicas: 1}` and `JSONPatch{op: "add", …}`, which mutating
 * policies need and @marcbachmann/cel-js cannot parse. Before parsing, each literal is rewritten to a
 * call of a registered function with a map of its fields:
 *   Object{spec: Object.spec{replicas: 1}}
 *   → __orchd_struct("Object", {"spec": __orchd_struct("Object.spec", {"replicas": 1})})
 * The rewrite keeps a map from rewritten offsets to original ones, so every error still points into
 * the expression the user wrote. Type and field names are reported to the caller for checking.
 */
import { tokenize, type Token } from './tokens.js';

export const STRUCT_FUNCTION = '__orchd_struct';

export interface StructLiteral {
  typeName: string;
  /** Offset of the type name in the original expression. */
  start: number;
  fields: { name: string; start: number }[];
}

export interface Rewritten {
  text: string;
  /** Original offset of each rewritten offset (one more entry, for the end). */
  origin: number[];
  structs: StructLiteral[];
  issues: { message: string; start: number }[];
}

const NOT_TYPE_NAMES = new Set(['in', 'true', 'false', 'null']);

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Rewrites struct literals; an expression without any comes back unchanged. */
export function rewriteStructLiterals(src: string): Rewritten {
  const tokens = tokenize(src);
  const edits: Edit[] = [];
  const structs: StructLiteral[] = [];
  const issues: Rewritten['issues'] = [];
  const stack: { struct?: StructLiteral; expectField: boolean }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const top = stack[stack.length - 1];
    if (t.kind === 'punct' && (t.text === '(' || t.text === '[')) stack.push({ expectField: false });
    else if (t.kind === 'punct' && (t.text === ')' || t.text === ']')) stack.pop();
    else if (t.kind === 'punct' && t.text === '{') {
      const name = typeNameBefore(tokens, i);
      if (!name) {
        stack.push({ expectField: false });
        continue;
      }
      const literal: StructLiteral = { typeName: name.text, start: tokens[name.first].start, fields: [] };
      structs.push(literal);
      edits.push({ start: tokens[name.first].start, end: t.end, text: `${STRUCT_FUNCTION}(${JSON.stringify(name.text)}, {` });
      stack.push({ struct: literal, expectField: true });
      continue;
    } else if (t.kind === 'punct' && t.text === '}') {
      const closed = stack.pop();
      if (closed?.struct) edits.push({ start: t.start, end: t.end, text: '})' });
    } else if (t.kind === 'punct' && t.text === ',' && top?.struct) {
      top.expectField = true;
      continue;
    }
    if (top?.struct && top.expectField && !(t.kind === 'punct' && t.text === '}')) {
      top.expectField = false;
      if (t.kind === 'punct' && t.text === '?') {
        issues.push({ message: 'optional field initializers are not supported', start: t.start });
        continue;
      }
      if (t.kind === 'ident' && tokens[i + 1]?.text === ':') {
        top.struct.fields.push({ name: t.text, start: t.start });
        edits.push({ start: t.start, end: t.end, text: JSON.stringify(t.text) });
      } else {
        issues.push({ message: `Syntax error: expected a field name in ${top.struct.typeName}{…}`, start: t.start });
      }
    }
  }
  return { ...apply(src, edits), structs, issues };
}

/** The qualified name ending right before tokens[brace], if that `{` opens a struct literal. */
function typeNameBefore(tokens: Token[], brace: number): { text: string; first: number } | undefined {
  let j = brace - 1;
  if (tokens[j]?.kind !== 'ident' || NOT_TYPE_NAMES.has(tokens[j].text)) return undefined;
  const parts = [tokens[j].text];
  while (tokens[j - 1]?.text === '.' && tokens[j - 2]?.kind === 'ident') {
    parts.unshift(tokens[j - 2].text);
    j -= 2;
  }
  const before = tokens[j - 1];
  // `a.b{` after a call, an index or a literal is a member chain, not a type name.
  if (before && (before.text === '.' || before.text === ')' || before.text === ']' || before.kind === 'number' || before.kind === 'string')) return undefined;
  return { text: parts.join('.'), first: j };
}

function apply(src: string, edits: Edit[]): { text: string; origin: number[] } {
  edits.sort((a, b) => a.start - b.start);
  let text = '';
  const origin: number[] = [];
  let at = 0;
  const copy = (to: number) => {
    for (let k = at; k < to; k++) origin.push(k);
    text += src.slice(at, to);
    at = to;
  };
  for (const e of edits) {
    copy(e.start);
    for (let k = 0; k < e.text.length; k++) origin.push(e.start);
    text += e.text;
    at = e.end;
  }
  copy(src.length);
  origin.push(src.length);
  return { text, origin };
}
