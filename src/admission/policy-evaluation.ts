/**
 * Evaluating a compiled policy's expressions, as Kubernetes' CEL filter and match-condition
 * matcher do, for both policy flavours.
 */
import { CelEvaluationError, type Activation } from '../cel/index.js';
import type { Compiled, CompiledMatchCondition } from './compile-policy.js';

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Evaluates a compiled expression; errors worded as Kubernetes' CEL filter words them. */
export function runExpression(c: Compiled, act: Activation, expression: string): { value?: unknown; error?: string } {
  if (c.error !== undefined) return { error: c.error };
  try {
    return { value: c.program.evaluate(act) };
  } catch (err) {
    const text = err instanceof CelEvaluationError ? err.message : errorText(err);
    return { error: `expression '${expression}' resulted in error: ${text}` };
  }
}

// Every policy of every write asks, so the common answers are not allocated each time.
const MATCH = Object.freeze({ matches: true });
const NO_MATCH = Object.freeze({ matches: false });

/**
 * matchConditions: any false skips the policy; otherwise an error is the caller's to hand to
 * failurePolicy. Every condition runs (as Kubernetes' matcher does); the errors are reported
 * together.
 */
export function matchConditionsOutcome(conditions: readonly CompiledMatchCondition[], act: Activation): { matches: boolean } | { error: string } {
  let errors: string[] | undefined;
  for (const m of conditions) {
    const r = runExpression(m.check, act, m.expression);
    if (r.error !== undefined) (errors ??= []).push(r.error);
    else if (r.value === false) return NO_MATCH;
  }
  if (errors) return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
  return MATCH;
}
