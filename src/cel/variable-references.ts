/**
 * Which `variables.<name>` a CEL expression mentions, read from its tokens (string literals and
 * comments skipped, `x.variables.y` field selections ignored). The admission kinds' validation uses
 * it for the declaration-order rule that Kubernetes gets from compiling the variables in order.
 */
import { tokenize } from './tokens.js';

/** Names read as `variables.name` or `variables['name']`, in order of first mention. */
export function referencedVariables(expression: string): string[] {
  const t = tokenize(expression);
  const names: string[] = [];
  for (let i = 0; i < t.length; i++) {
    if (t[i].kind !== 'ident' || t[i].text !== 'variables') continue;
    if (i > 0 && t[i - 1].text === '.') continue;
    const next = t[i + 1];
    let name: string | undefined;
    if (next?.text === '.' && t[i + 2]?.kind === 'ident') name = t[i + 2].text;
    else if (next?.text === '[' && t[i + 2]?.kind === 'string' && t[i + 3]?.text === ']') name = t[i + 2].value;
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}
