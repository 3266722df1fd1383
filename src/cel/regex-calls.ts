/**
 * What compiling a program does with its regular expressions, as cel-go does for Kubernetes:
 *
 * - every `matches` call is pointed at the RE2 implementation (lib/regex.ts), since the CEL
 *   library's own runs on JavaScript's backtracking engine;
 * - a constant pattern RE2 refuses is a compile error: for `matches`, cel-go's regex literal
 *   validator reports `invalid matches argument` at the pattern; for `find`/`findAll`, Kubernetes'
 *   regex optimisation fails when the program is built (`program instantiation failed: error
 *   parsing regexp: …`).
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import type { CelIssue } from './errors.js';
import { re2Error } from './lib/re2.js';
import { RE2_MATCHES } from './lib/regex.js';

export interface RegexProblems {
  issues: CelIssue[];
  /** Why the program could not be built, in cel-go's words, or undefined. */
  instantiation?: string;
}

export function bindRegexCalls(ast: ASTNode): RegexProblems {
  const out: RegexProblems = { issues: [] };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isNode(value) || value.op === 'value' || value.op === 'id') return;
    if (value.op === 'rcall') {
      const args = value.args as unknown as [string, ASTNode, ASTNode[]];
      const [name, , params] = args;
      const pattern = params[0]?.op === 'value' && typeof params[0].args === 'string' ? params[0].args : undefined;
      if (name === 'matches' && params.length === 1) {
        args[0] = RE2_MATCHES;
        if (pattern !== undefined && re2Error(pattern)) out.issues.push({ message: 'invalid matches argument', start: params[0].start });
      } else if ((name === 'find' || name === 'findAll') && pattern !== undefined) {
        const err = re2Error(pattern);
        if (err && !out.instantiation) out.instantiation = `program instantiation failed: ${err}`;
      }
    }
    visit(value.args);
  };
  visit(ast);
  return out;
}

const isNode = (v: unknown): v is ASTNode => typeof v === 'object' && v !== null && 'op' in v && 'args' in v;

/** The first problem in one line (for the configuration files, which report one line a field). */
export function regexProblemText(p: RegexProblems): string | undefined {
  return p.issues.length ? `compilation failed: ${p.issues[0].message}` : p.instantiation;
}
