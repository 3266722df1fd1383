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
