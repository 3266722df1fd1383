/**
 * Kubernetes' regular expressions are Go's RE2: linear in the input, no lookaround, no
 * backreferences. They run here on re2js, a port of RE2/J (Go's regexp) to JavaScript, so syntax,
 * semantics and the parser's error messages are RE2's exactly and no pattern can make a match
 * backtrack. Why re2js and not re2-wasm or the native re2: bench/RESULTS.md ("Regular expressions").
 */
import { RE2JS, RE2JSException } from 're2js';
import { celError } from './common.js';

const cache = new Map<string, RE2JS>();
const CACHE_MAX = 500;

/** Go's words for why the pattern does not compile (`error parsing regexp: …`), or undefined. */
export function re2Error(pattern: string): string | undefined {
  try {
    re2(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** re2js' compiled program (not in its typings; the version is pinned and test/cel/compiler.test.ts checks it). */
interface Program {
  prog: { inst: { op: number }[] };
}
/** re2js' Inst.RUNE … Inst.RUNE_ANY_NOT_NL: the instructions that consume a character. */
const RUNE_OPS = { first: 8, last: 11 };
const states = new WeakMap<RE2JS, number>();

/**
 * The character-consuming states of the pattern's program: what a match steps through at most per
 * character of input. About the pattern's length, except where counted repetition expands it
 * (`[a-z]{1000}` is 12 characters and 1000 states).
 */
export function regexStates(re: RE2JS): number {
  let n = states.get(re);
  if (n === undefined) {
    n = (re as unknown as { re2Input: Program }).re2Input.prog.inst.filter((i) => i.op >= RUNE_OPS.first && i.op <= RUNE_OPS.last).length;
    states.set(re, n);
  }
  return n;
}

/** The compiled pattern, compiled once per pattern; a pattern RE2 refuses throws a CEL error. */
export function re2(pattern: string): RE2JS {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    if (e instanceof RE2JSException) throw celError(e.message, 'invalid_regular_expression');
    throw e;
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(pattern, re);
  return re;
}
