/**
 * Kubernetes' escaping of schema property names into CEL identifiers (apiserver/pkg/cel/escaping.go):
 * a property a CEL rule cannot name as it is becomes `__{word}__` when it is a word CEL reserves, and
 * has `__` → `__underscores__`, `.` → `__dot__`, `-` → `__dash__`, `/` → `__slash__` otherwise:
 *
 *   namespace → __namespace__   x-y → x__dash__y   a.b/c → a__dot__b__slash__c   a__b → a__underscores__b
 *
 * A name with any other character, or starting with a digit, cannot be escaped: rules cannot reach it.
 */

import { CEL_RESERVED } from '../api/name-formats.js';

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ESCAPABLE = /^[A-Za-z_.\-/][A-Za-z0-9_.\-/]*$/;
const ESCAPES: Record<string, string> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };

/**
 * Whether a rule may also name a property by the word itself (`self.namespace`, `self.if`), as
 * kube-apiserver allows since 1.31: its type provider looks a reserved word up as `__word__` when
 * no field has the plain name (DeclTypeProvider.recognizeKeywordAsFieldName).
 */
export function isReservedWord(name: string): boolean {
  return CEL_RESERVED.has(name);
}

/** The CEL identifier of a property name, or undefined when it has none. */
export function escapeProperty(name: string): string | undefined {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (PLAIN.test(name) && !name.includes('__')) return name;
  if (!ESCAPABLE.test(name) || /^[0-9]/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (s) => ESCAPES[s]!);
}
