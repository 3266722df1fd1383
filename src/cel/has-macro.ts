/**
 * `has()` as cel-go defines it, over @marcbachmann/cel-js 8.0.0's macro.
 *
 * The library's has() accepts only a chain of field selections down to a variable, and does not
 * check the last field against the operand's type. cel-go accepts a selection from any expression
 * (`has(self[0].matches)`, `has(self.m['k'].f)`: operators' CRDs use both) and type-checks it like
 * the selection itself, so a field the schema does not declare is "undefined field" at compile time.
 *
 * The library registers has() in its global registry, where a second declaration is refused, so
 * this wraps each parsed has() call instead: after `env.parse()`, `kubernetesHas(parsed.ast)` swaps
 * the macro's typeCheck (and, for a selection that is not a plain chain, its evaluate) for cel-go's.
 * The same change belongs in the library's createHasExpander (lib/macros.js): type-check
 * `macro.args[0]` as a selection, and evaluate its operand before testing the field's presence.
 * It is written so it can be offered upstream as that; test/cel/has-macro.test.ts pins the library's
 * own behaviour, so the day the library changes, the test says this file can go.
 */
import type { ASTNode } from '@marcbachmann/cel-js';

/** The parts of the library's AST and checker this relies on (not in its published types). */
interface Node {
  op: string;
  args: unknown;
  meta?: { macro?: Macro; alternate?: Node };
}
interface Macro {
  args: Node[];
  typeCheck(checker: Checker, macro: Macro, ctx: unknown): unknown;
  evaluate(ev: Evaluator, macro: Macro, ctx: unknown): unknown;
  kubernetesHas?: true;
}
interface Checker {
  check(node: Node, ctx: unknown): unknown;
  getType(name: string): unknown;
  createError(code: string, message: string, node: Node): Error;
}
interface Evaluator {
  run(node: Node, ctx: unknown): unknown;
  debugType(value: unknown): { fieldLazy(obj: unknown, key: string, node: Node, ev: Evaluator): unknown };
}

/** cel-go's words (parser/macro.go). */
const INVALID = 'invalid argument to has() macro';

/** Rewrites every has() call in a parsed expression in place; returns the same tree. */
export function kubernetesHas(ast: ASTNode): ASTNode {
  visit(ast as unknown as Node, new Set());
  return ast;
}

function visit(x: unknown, seen: Set<unknown>): void {
  if (x === null || typeof x !== 'object' || seen.has(x)) return;
  seen.add(x);
  if (Array.isArray(x)) {
    for (const v of x) visit(v, seen);
    return;
  }
  const node = x as Node;
  if (typeof node.op === 'string' && 'args' in node) {
    const macro = node.meta?.macro;
    if (node.op === 'call' && (node.args as unknown[])[0] === 'has' && macro && !macro.kubernetesHas) wrap(macro);
    visit(node.args, seen);
    visit(node.meta?.alternate, seen);
    return;
  }
  for (const v of Object.values(x)) visit(v, seen);
}

function wrap(macro: Macro): void {
  const libraryCheck = macro.typeCheck;
  const arg = macro.args[0]!;
  const chain = isChain(arg);
  macro.kubernetesHas = true;
  macro.typeCheck = (checker, m, ctx) => {
    if (arg.op !== '.') throw checker.createError('invalid_macro_argument', INVALID, arg);
    // The selection type-checks as it would outside has(): an undeclared field of a typed object fails.
    checker.check(arg, ctx);
    return chain ? libraryCheck(checker, m, ctx) : checker.getType('bool');
  };
  if (chain) return;
  macro.evaluate = (ev, _m, ctx) => {
    const [operand, field] = arg.args as [Node, string];
    const value = ev.run(operand, ctx);
    return ev.debugType(value).fieldLazy(value, field, arg, ev) !== undefined;
  };
}

/** `a.b.c`: field selections (plain or optional) down to a variable, which the library's has() handles. */
function isChain(node: Node): boolean {
  let n = node;
  while (n.op === '.' || n.op === '.?') n = (n.args as Node[])[0]!;
  return n.op === 'id';
}
