/**
 * Kubernetes' regular expressions are RE2; ours run on the JS engine. RE2 syntax is translated where
 * the two differ ((?P<name>…), leading (?i)/(?s)/(?m) flags, \A and \z, POSIX classes), and what RE2
 * refuses (lookaround, backreferences) is refused here too, so a policy that works here works in
 * Kubernetes. JS regexes backtrack, so a pathological pattern is slow here where RE2 is linear; the
 * evaluation's time bound does not interrupt a single regex match (see the room's notes).
 */
import { celError } from './common.js';

const cache = new Map<string, RegExp>();
const CACHE_MAX = 500;

const POSIX: Record<string, string> = {
  alnum: 'a-zA-Z0-9', alpha: 'a-zA-Z', ascii: '\\x00-\\x7f', blank: ' \\t', cntrl: '\\x00-\\x1f\\x7f', digit: '0-9',
  graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~', space: ' \\t\\n\\v\\f\\r', upper: 'A-Z', word: '\\w', xdigit: '0-9A-Fa-f',
};

/** Why RE2 would refuse the pattern, or undefined when it is acceptable. */
export function re2Refusal(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern)) return 'invalid or unsupported Perl syntax: `(?=`';
  if (/(^|[^\\])(\\\\)*\\[1-9]/.test(pattern)) return 'invalid escape sequence: backreference';
  return undefined;
}

/** A JS RegExp for an RE2 pattern (global when asked), compiled once per pattern. */
export function re2(pattern: string, global = false): RegExp {
  const key = (global ? 'g' : '') + '\u0000' + pattern;
  const hit = cache.get(key);
  if (hit) {
    hit.lastIndex = 0;
    return hit;
  }
  const refusal = re2Refusal(pattern);
  if (refusal) throw celError(`error parsing regexp: ${refusal}`, 'invalid_regular_expression');
  let src = pattern;
  let flags = global ? 'g' : '';
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    src = src.slice(lead[0].length);
    for (const f of lead[1]) if (f !== 'U' && !flags.includes(f)) flags += f;
  }
  src = src
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$')
    .replace(/\[:(\^?)([a-z]+):\]/g, (m, neg: string, name: string) => (POSIX[name] && !neg ? POSIX[name] : m));
  if (/\\[pP]/.test(src)) flags += 'u';
  let re: RegExp;
  try {
    re = new RegExp(src, flags);
  } catch (e) {
    throw celError(`error parsing regexp: ${(e as Error).message}`, 'invalid_regular_expression');
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, re);
  return re;
}
