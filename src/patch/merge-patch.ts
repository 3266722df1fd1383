/**
 * JSON Merge Patch (RFC 7386): members of the patch replace the target's, null removes a member,
 * objects merge recursively, and everything else (lists included) is replaced whole.
 *
 *   applyMergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })  →  { a: 'z', c: { d: 'e' } }
 */
import { cloneJson, hasKey, isObject, setKey, type JsonObject } from '../api/json-access.js';

/** The patched copy of target; neither argument is changed. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const out: JsonObject = isObject(target) ? cloneJson(target) : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name];
    else setKey(out, name, applyMergePatch(hasKey(out, name) ? out[name] : undefined, value));
  }
  return out;
}
