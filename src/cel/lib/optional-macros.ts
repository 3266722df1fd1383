/**
 * cel-go's optional library macros that @marcbachmann/cel-js 8.0.0 lacks: `opt.optMap(v, expr)`
 * (empty stays empty, a value is bound to v and the result wrapped: optional.of(expr)) and
 * `opt.optFlatMap(v, expr)` (the same, expr itself an optional), and `optional.ofNonZeroValue(x)`
 * (empty for a type's zero value: 0, '', false, null, an empty list or map). They are built on the
 * library's own macro interface, as its cel.bind is: the variable is bound through the same scope
 * object, so budget.ts's step counting sees nothing new.
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { celError, sync } from './common.js';

interface CheckType {
  kind: string;
  hasPlaceholderType?: boolean;
  valueType?: CheckType;
}
interface Checker {
  check(n: unknown, ctx: unknown): CheckType;
  getType(name: string): CheckType;
  createError(code: string, message: string, n: unknown): Error;
  registry: { getOptionalType(t: CheckType): CheckType };
}
interface Scope {
  forkWithVariable(name: string, t: CheckType): Scope;
  reuse(ctx: unknown): { setIterValue(v: unknown, ev: unknown): unknown };
}
interface MacroNode {
  op: string;
  args: unknown;
  maybeAsync?: boolean;
  setMeta(k: string, v: unknown): unknown;
}
interface Macro {
  ast: MacroNode;
  receiver: MacroNode;
  var: string;
  exp: MacroNode;
  bindCtx?: Scope;
}
interface Evaluator {
  run(n: unknown, ctx: unknown): unknown;
}

function optionalMacro(name: 'optMap' | 'optFlatMap') {
  const flat = name === 'optFlatMap';
  return ({ ast, args, receiver }: { ast: MacroNode; args: MacroNode[]; receiver: MacroNode }) => {
    const v = args[0]!;
    if (v.op !== 'id') throw celError(`optional.${name}(var, expr) invalid variable argument`, 'invalid_macro_argument');
    const m: Macro & { typeCheck: unknown; evaluate: unknown } = {
      ast,
      receiver,
      var: v.args as string,
      exp: args[1]!,
      typeCheck(checker: Checker, mm: Macro, ctx: Scope) {
        const rt = checker.check(mm.receiver, ctx);
        if (rt.kind !== 'optional' && rt.kind !== 'dyn') throw checker.createError('optional_expected', `optional.${name}() receiver must be optional`, mm.receiver);
        const vt = rt.kind === 'optional' ? rt.valueType : rt;
        // An unresolved element type (`{}.?key` is optional<V>) binds as dyn.
        mm.bindCtx = ctx.forkWithVariable(mm.var, !vt || vt.kind === 'param' || vt.hasPlaceholderType ? checker.getType('dyn') : vt);
        const t = checker.check(mm.exp, mm.bindCtx);
        if (!(mm.receiver.maybeAsync || mm.exp.maybeAsync)) mm.ast.setMeta('async', false);
        if (!flat) return checker.registry.getOptionalType(t);
        if (t.kind === 'optional') return t;
        if (t.kind === 'dyn') return checker.getType('optional');
        throw checker.createError('optional_expected', `optional.${name}() expression must be optional`, mm.exp);
      },
      evaluate(ev: Evaluator, mm: Macro, ctx: unknown) {
        const o = ev.run(mm.receiver, ctx);
        if (!(o instanceof Optional)) throw celError(`optional.${name}() receiver must be optional`, 'optional_expected');
        if (!o.hasValue()) return Optional.none();
        const r = ev.run(mm.exp, mm.bindCtx!.reuse(ctx).setIterValue(o.value(), ev));
        if (!flat) return Optional.of(r);
        if (!(r instanceof Optional)) throw celError(`optional.${name}() expression must be optional`, 'optional_expected');
        return r;
      },
    };
    return m;
  };
}

function isZero(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (typeof v === 'object' && v !== null && [null, Object.prototype].includes(Object.getPrototypeOf(v) as object | null)) return Object.keys(v).length === 0;
  if (typeof v === 'object' && v !== null && typeof (v as { valueOf(): unknown }).valueOf() === 'bigint') return (v as { valueOf(): bigint }).valueOf() === 0n;
  return false;
}

export function registerOptionalMacros(env: Environment): void {
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optionalMacro('optMap') as never);
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optionalMacro('optFlatMap') as never);
  env.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', ((_: unknown, v: unknown) => (isZero(v) ? Optional.none() : Optional.of(v))) as never, sync);
}
