/**
 * Equality of optionals, as cel-go's: two optionals are equal when both are empty or both hold
 * equal values, and an optional is never equal to null (cel-go's checker lets `opt == null` through,
 * optional being an opaque type, which is nullable). @marcbachmann/cel-js 8.0.0 declares neither,
 * so `self.?items == optional.none()` and `self.?items == null` were "no such overload".
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { celEquals } from './common.js';

export function registerOptionalEquality(env: Environment): void {
  // `!=` comes with `==`: the library derives the one from the other.
  env.registerOperator('optional<A> == optional<A>', (a: Optional, b: Optional) => {
    if (!a.hasValue() || !b.hasValue()) return a.hasValue() === b.hasValue();
    return celEquals(a.value(), b.value());
  });
  env.registerOperator('optional<dyn> == null', () => false);
}
