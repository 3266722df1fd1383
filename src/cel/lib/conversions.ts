/** Conversions CEL defines that @marcbachmann/cel-js 8.0.0 lacks. */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celError, sync } from './common.js';
import { formatAsString } from './strings.js';

const MAX_INT = 9223372036854775807n;

export function registerConversions(env: Environment): void {
  env.registerFunction(
    'int(uint): int',
    (u: UnsignedInt) => {
      if (u.valueOf() > MAX_INT) throw celError('integer overflow', 'numeric_overflow');
      return u.valueOf();
    },
    sync,
  );
  env.registerFunction('int(google.protobuf.Timestamp): int', (t: Date) => BigInt(Math.floor(t.getTime() / 1000)), sync);
  env.registerFunction('string(google.protobuf.Timestamp): string', (t: Date) => formatAsString(t), sync);
  env.registerFunction('string(google.protobuf.Duration): string', (d: Duration) => d.toString(), sync);
  env.registerFunction('timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (t: Date) => t, sync);
  env.registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: Duration) => d, sync);
}
