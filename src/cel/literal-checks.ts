/**
 * cel-go's AST validators that Kubernetes enables (apiserver/pkg/cel/environment/base.go, 1.29+):
 *
 * - ValidateDurationLiterals / ValidateTimestampLiterals: `duration('…')` and `timestamp('…')` of
 *   a literal that does not parse are compile errors, `invalid duration argument` at the literal;
 * - ValidateHomogeneousAggregateLiterals: the elements of a list literal, and the keys and the
 *   values of a map literal, are of one type (`expected type 'int' but found 'string'`), except
 *   inside string.format's arguments.
 *
 * The homogeneity check is kept to the primitive types, where this checker's types and cel-go's
 * agree exactly; elsewhere (objects this checker types as dyn) it could refuse what cel-go accepts.
 */
import type { ASTNode, Environment } from '@marcbachmann/cel-js';
import { createCelEnvironment } from './environment.js';
import type { CelIssue } from './errors.js';
import { STRUCT_FUNCTION } from './struct-literals.js';

const PRIMITIVES = new Set(['int', 'uint', 'double', 'string', 'bytes', 'bool']);
let probe: Environment | undefined;

function parses(fn: 'duration' | 'timestamp', literal: string): boolean {
  probe ??= createCelEnvironment();
  try {
    probe.evaluate(`${fn}(${JSON.stringify(literal)})`);
    return true;
  } catch {
    return false;
  }
}

const typeOf = (n: ASTNode): string | undefined => (n as unknown as { checkedType?: { name?: string } }).checkedType?.name;
const isNode = (v: unknown): v is ASTNode => typeof v === 'object' && v !== null && 'op' in v && 'args' in v;

export function literalIssues(ast: ASTNode): CelIssue[] {
  const issues: CelIssue[] = [];
  const mismatch = (expected: string, el: ASTNode) => {
    const found = typeOf(el);
    if (found !== undefined && PRIMITIVES.has(expected) && PRIMITIVES.has(found) && found !== expected) issues.push({ message: `expected type '${expected}' but found '${found}'`, start: el.start });
  };
  const visit = (value: unknown, inFormat: boolean): void => {
    if (Array.isArray(value)) return value.forEach((v) => visit(v, inFormat));
    if (!isNode(value) || value.op === 'value' || value.op === 'id') return;
    let format = inFormat;
    if (value.op === 'call') {
      const [name, args] = value.args as unknown as [string, ASTNode[]];
      // Object construction (struct-literals.ts) is a map of fields of their own types, not a map literal.
      if (name === STRUCT_FUNCTION)
        return visit(
          args.slice(1).map((m) => m.args),
          inFormat,
        );
      const arg = args[0];
      if ((name === 'duration' || name === 'timestamp') && args.length === 1 && arg?.op === 'value' && typeof arg.args === 'string' && !parses(name, arg.args)) {
        issues.push({ message: `invalid ${name} argument`, start: arg.start });
      }
    } else if (value.op === 'rcall') {
      if ((value.args as unknown as [string])[0] === 'format') format = true;
    } else if (!inFormat && value.op === 'list') {
      const items = value.args as unknown as ASTNode[];
      const first = items[0] && typeOf(items[0]);
      if (first !== undefined) for (const el of items.slice(1)) mismatch(first, el);
    } else if (!inFormat && value.op === 'map') {
      const entries = value.args as unknown as [ASTNode, ASTNode][];
      const [k0, v0] = entries[0] ?? [];
      const kt = k0 && typeOf(k0);
      const vt = v0 && typeOf(v0);
      for (const [k, v] of entries.slice(1)) {
        if (kt !== undefined) mismatch(kt, k);
        if (vt !== undefined) mismatch(vt, v);
      }
    }
    visit(value.args, format);
  };
  visit(ast, false);
  return issues;
}
