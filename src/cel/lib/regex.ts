/**
 * Regular expressions in CEL: the standard `string.matches(regex)` and Kubernetes' regex library,
 * `string.find(regex)` and `string.findAll(regex[, limit])`, all on RE2 (re2.ts).
 *
 * @marcbachmann/cel-js ships its own `matches` on the backtracking JavaScript engine and refuses a
 * second overload of the same signature, so ours is registered under another name and each parsed
 * program's `matches` calls are pointed at it (bindRegexCalls, src/cel/regex-calls.ts).
 *
 * Each call charges the evaluation's runtime budget before it runs, with Kubernetes' runtime cost
 * for these functions: ceil((1 + size(string)) × 0.1) × ceil(size(regex) × 0.25), so a match that
 * would take the evaluation past its limit is refused before it starts ("operation cancelled:
 * actual cost limit exceeded"): a match cannot be interrupted once started. cel-go takes the
 * pattern's length for the size of its state machine, guessing four characters an expression; a
 * counted repetition breaks that guess (`[a-z]{1000}!` is 12 characters, 1001 states, and a `find`
 * of it on 3 MB takes 89 s, at a cost of 943,719: under the limit). So the size here is the larger
 * of the pattern's length and its states (re2.ts, regexStates): the same cost as Kubernetes for
 * any pattern without such a repetition, and a bound on the work (string × states) for all, which
 * keeps the longest match the limit allows to a second or two (bench/RESULTS.md).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { charge } from '../budget.js';
import { sync } from './common.js';
import type { RE2JS } from 're2js';
import { re2, regexStates } from './re2.js';

/** The name `matches` calls are bound to in a parsed program. */
export const RE2_MATCHES = 'orchdRe2Matches';

const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;

function chargeFor(s: string, pattern: string, re: RE2JS): void {
  charge(Math.ceil((1 + s.length) * STRING_TRAVERSAL_FACTOR) * Math.ceil(Math.max(pattern.length, regexStates(re)) * REGEX_LENGTH_FACTOR));
}

export function registerRegex(env: Environment): void {
  env.registerFunction(`string.${RE2_MATCHES}(string): bool`, matches, sync);
  env.registerFunction('string.find(string): string', find, sync);
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n), sync);
  env.registerFunction('string.findAll(string, int): list<string>', findAll, sync);
}

function matches(s: string, p: string): boolean {
  const re = re2(p);
  chargeFor(s, p, re);
  return re.re2Input.match(s) as boolean;
}

function find(s: string, p: string): string {
  const re = re2(p);
  chargeFor(s, p, re);
  return re.re2Input.find(s) as string;
}

function findAll(s: string, p: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  const re = re2(p);
  chargeFor(s, p, re);
  return (re.re2Input.findAll(s, limit < 0n ? -1 : Number(limit)) as string[] | null) ?? [];
}
