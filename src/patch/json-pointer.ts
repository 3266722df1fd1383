/**
 * JSON Pointer (RFC 6901): `/a/b~1c/0` names a member or an array element; `~1` stands for `/`
 * and `~0` for `~`. The empty pointer names the whole document.
 */
import { PatchError } from './errors.js';

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError('Unprocessable', `invalid JSON pointer ${JSON.stringify(pointer)}: must be empty or start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) throw new PatchError('Unprocessable', `invalid JSON pointer ${JSON.stringify(pointer)}: "~" must be followed by 0 or 1`);
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

export const formatPointer = (tokens: readonly string[]): string => tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

/**
 * An array index token: decimal digits without leading zeros (RFC 6901 §4). `-` (past the end) is
 * only meaningful to add and is left to the caller. Returns undefined when the token is no index.
 */
export function arrayIndex(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const n = Number(token);
  return Number.isSafeInteger(n) ? n : undefined;
}
