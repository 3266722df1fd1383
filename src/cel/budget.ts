/**
 * The runtime bound of an evaluation: a cost counter (Kubernetes' per-call cost limit, counted in
 * comprehension steps plus what the costly library functions charge, regular expressions by
 * Kubernetes' runtime cost) and a wall-clock deadline.
 *
 * @marcbachmann/cel-js evaluates synchronously and has no cost counter or cancellation. Every
 * comprehension step (all, exists, exists_one, map, filter, cel.bind) binds its iteration variable
 * through one method of the library's scope object (OverlayContext.setIterValue), so that method
 * is wrapped once, here, to count steps and look at the clock. The library version is pinned; the
 * tests in test/cel/budget.test.ts fail if a new version stops calling it.
 */
import { Environment } from '@marcbachmann/cel-js';
import { CelCostLimitError, CelTimeoutError, type CelEvaluationError } from './errors.js';

export interface EvaluationBounds {
  /** Comprehension steps allowed in one evaluation. */
  costLimit: number;
  /** Wall-clock milliseconds allowed for one evaluation. */
  timeoutMs: number;
}

/** Kubernetes' per-expression runtime cost limit (PerCallLimit). */
export const DEFAULT_COST_LIMIT = 1_000_000;
export const DEFAULT_TIMEOUT_MS = 1000;
/** How many steps run between two looks at the clock. */
const CLOCK_EVERY = 128;

interface Meter {
  steps: number;
  limit: number;
  deadline: number;
  timeoutMs: number;
  /** Once tripped, every later step throws again: CEL's `||`/`&&` and quantifiers absorb errors. */
  tripped?: CelEvaluationError;
}

let current: Meter | undefined;

type SetIterValue = (this: unknown, value: unknown, ev: unknown) => unknown;

function installStepHook(): void {
  let proto: { setIterValue: SetIterValue } | undefined;
  // A throwaway macro hands us the library's scope object at type-check time.
  const probe = new Environment().registerFunction('orchdProbe(ast): bool', () => ({
    typeCheck(checker: { getType(n: string): unknown }, _m: unknown, ctx: { forkWithVariable(n: string, t: unknown): object }) {
      proto = Object.getPrototypeOf(ctx.forkWithVariable('x', checker.getType('dyn')));
      return checker.getType('bool');
    },
    evaluate: () => true,
  }));
  probe.check('orchdProbe(1)');
  if (!proto || typeof proto.setIterValue !== 'function') throw new Error('cel: cannot find the comprehension step of @marcbachmann/cel-js');
  const original = proto.setIterValue;
  proto.setIterValue = function (this: unknown, value: unknown, ev: unknown) {
    const m = current;
    if (m !== undefined) step(m);
    return original.call(this, value, ev);
  };
}

function step(m: Meter): void {
  if (m.tripped) throw m.tripped;
  m.steps++;
  if (m.steps > m.limit) throw (m.tripped = new CelCostLimitError(m.limit));
  if (m.steps % CLOCK_EVERY === 0 && performance.now() > m.deadline) throw (m.tripped = new CelTimeoutError(m.timeoutMs));
}

installStepHook();

/**
 * Charges a library function's cost to the active evaluation before it runs, so a call that would
 * take the evaluation past its limit or its deadline never starts. Outside an evaluation: free.
 */
export function charge(cost: number): void {
  const m = current;
  if (m === undefined) return;
  if (m.tripped) throw m.tripped;
  m.steps += cost;
  if (m.steps > m.limit) throw (m.tripped = new CelCostLimitError(m.limit));
  if (performance.now() > m.deadline) throw (m.tripped = new CelTimeoutError(m.timeoutMs));
}

/**
 * Runs `fn` under the bounds. A nested call (a variable evaluated from inside an expression) runs
 * under the outer meter, so a variable's steps count toward the expression that needed it.
 */
export function withBounds<T>(bounds: EvaluationBounds, fn: () => T): T {
  return measured(bounds, fn).value;
}

/** withBounds, telling the cost the run used too (a CRD's rules share one budget per object). */
export function measured<T>(bounds: EvaluationBounds, fn: () => T): { value: T; cost: number } {
  if (current) return { value: fn(), cost: 0 };
  const m: Meter = { steps: 0, limit: bounds.costLimit, deadline: performance.now() + bounds.timeoutMs, timeoutMs: bounds.timeoutMs };
  current = m;
  try {
    const value = fn();
    if (m.tripped) throw m.tripped;
    return { value, cost: m.steps };
  } catch (e) {
    throw m.tripped ?? e;
  } finally {
    current = undefined;
  }
}
