/**
 * Which `variables.<name>` a CEL expression mentions, read from its tokens (string literals and
 * comments skipped, `x.variables.y` field selections ignored). The admission kinds' validation uses
 * it for the declaration-order rule that Kubernetes gets from compiling the variables in order, and
 * to refuse matchConditions that read variables at all.
 */
import { tokenize, type Token } from './tokens.js';

/** Indexes of the `variables` identifiers of an expression (not `x.variables` field selections). */
function variablesTokens(t: Token[]): number[] {
  return t.flatMap((tok, i) => (tok.kind === 'ident' && tok.text === 'variables' && t[i - 1]?.text !== '.' ? [i] : []));
}

/** Where an expression first mentions the `variables` identifier, or undefined. */
export function variablesOffset(expression: string): number | undefined {
  const t = tokenize(expression);
  const first = variablesTokens(t)[0];
  return first === undefined ? undefined : t[first].start;
}

/** Names read as `variables.name` or `variables['name']`, in order of first mention. */
export function referencedVariables(expression: string): string[] {
  const t = tokenize(expression);
  const names: string[] = [];
  for (const i of variablesTokens(t)) {
    const next = t[i + 1];
    let name: string | undefined;
    if (next?.text === '.' && t[i + 2]?.kind === 'ident') name = t[i + 2].text;
    else if (next?.text === '[' && t[i + 2]?.kind === 'string' && t[i + 3]?.text === ']') name = t[i + 2].value;
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}
