/**
 * Admission expressions once compiled, and how they run, shared by policies and webhooks: an
 * expression that does not compile is kept as its error (met at admission time, where
 * failurePolicy governs it), and evaluation errors are worded as Kubernetes' CEL filter words them.
 *
 * matchConditions follow Kubernetes' matcher: every condition runs; any false means no match,
 * whatever the others did; otherwise their errors are reported together (one as it is, several as
 * `[a, b]`) for the caller's failurePolicy.
 */
import { fieldErrorText, type Activation, type CelProgram, type CompileOptions, type PolicyCompiler } from '../cel/index.js';
import { stringAt } from '../resources/json-access.js';

export type Compiled = { program: CelProgram; error?: undefined } | { program?: undefined; error: string };

export interface CompiledCondition {
  name: string;
  expression: string;
  check: Compiled;
}

export function compileExpression(compiler: PolicyCompiler, expression: string, opts: CompileOptions): Compiled {
  const r = compiler.compile(expression, opts);
  return r.ok ? { program: r.program } : { error: `compilation error: ${r.errors.map(fieldErrorText).join('; ')}` };
}

/** The matchConditions list at fieldPath (`spec.matchConditions`, `webhooks[0].matchConditions`). */
export function compileConditions(compiler: PolicyCompiler, conditions: unknown[], fieldPath: string): CompiledCondition[] {
  return conditions.map((m, i) => ({
    name: stringAt(m, 'name'),
    expression: stringAt(m, 'expression'),
    check: compileExpression(compiler, stringAt(m, 'expression'), { fieldPath: `${fieldPath}[${i}].expression`, returns: ['bool'] }),
  }));
}

/** Evaluates a compiled expression. */
export function runExpression(c: Compiled, act: Activation, expression: string): { value?: unknown; error?: string } {
  if (c.error !== undefined) return { error: c.error };
  try {
    return { value: c.program.evaluate(act) };
  } catch (err) {
    return { error: `expression '${expression}' resulted in error: ${err instanceof Error ? err.message : String(err)}` };
  }
}

export type ConditionsResult = { matches: boolean; error?: undefined } | { matches?: undefined; error: string };

export function evaluateConditions(conditions: readonly CompiledCondition[], act: Activation): ConditionsResult {
  const errors: string[] = [];
  for (const m of conditions) {
    const r = runExpression(m.check, act, m.expression);
    if (r.error !== undefined) errors.push(r.error);
    else if (r.value === false) return { matches: false };
  }
  if (errors.length > 0) return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
  return { matches: true };
}
