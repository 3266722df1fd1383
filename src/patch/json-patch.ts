/**
 * JSON Patch (RFC 6902): a list of add, remove, replace, move, copy and test operations applied in
 * order to a copy of the document. Any failing operation fails the whole patch, so the caller's
 * document is never half-patched.
 *
 *   applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/-', value: 2 }])  →  { a: [1, 2] }
 *
 * Errors: a patch that is not a list of objects is a BadPatch (Kubernetes' decode error, 400); an
 * operation that cannot be applied is Unprocessable (422); more than MAX_OPERATIONS is TooLarge.
 */
import { PatchError } from './errors.js';
import { arrayIndex, parsePointer } from './json-pointer.js';
import { cloneJson, hasKey, isObject, jsonEqual, setKey } from '../api/json-access.js';

/** Kubernetes' maxJSONPatchOperations. */
export const MAX_OPERATIONS = 10_000;

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
  hasValue: boolean;
}

const fail = (message: string): PatchError => new PatchError('Unprocessable', message);

/**
 * A `test` operation that found another value. Unprocessable as any failed operation, but told
 * apart: a mutating admission policy's patch whose test fails is skipped, not an error.
 */
export class TestFailedError extends PatchError {}

function decodeOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new PatchError('BadPatch', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (patch.length > MAX_OPERATIONS) {
    throw new PatchError('TooLarge', `The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${patch.length}`);
  }
  return patch.map((raw, i) => {
    if (!isObject(raw)) throw new PatchError('BadPatch', `json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type jsonpatch.Operation`);
    const op = raw.op;
    const path = raw.path;
    if (typeof op !== 'string') throw fail(`operation ${i}: missing or non-string "op"`);
    if (typeof path !== 'string') throw fail(`operation ${i} (${op}): missing or non-string "path"`);
    const out: Operation = { op, path, value: raw.value, hasValue: hasKey(raw, 'value') };
    if (hasKey(raw, 'from')) {
      if (typeof raw.from !== 'string') throw fail(`operation ${i} (${op}): non-string "from"`);
      out.from = raw.from;
    }
    return out;
  });
}

/** The container holding the last token of a pointer, and that token; throws when the container is missing. */
function parentOf(doc: unknown, tokens: string[], pointer: string): { parent: unknown; last: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    cur = childOf(cur, t);
    if (cur === undefined) throw fail(`path ${JSON.stringify(pointer)}: the parent of the target does not exist`);
  }
  return { parent: cur, last: tokens[tokens.length - 1] };
}

function childOf(container: unknown, token: string): unknown {
  if (Array.isArray(container)) {
    const i = arrayIndex(token);
    return i === undefined || i >= container.length ? undefined : container[i];
  }
  if (isObject(container)) return hasKey(container, token) ? container[token] : undefined;
  return undefined;
}

function get(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const t of parsePointer(pointer)) {
    cur = childOf(cur, t);
    if (cur === undefined) throw fail(`path ${JSON.stringify(pointer)} does not exist`);
  }
  return cur;
}

/** add: sets a member, inserts into an array (`-` appends), or replaces the document at "". */
function add(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : arrayIndex(last);
    if (i === undefined || i > parent.length) throw fail(`path ${JSON.stringify(pointer)}: index ${JSON.stringify(last)} is out of range for an array of ${parent.length}`);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) {
    setKey(parent, last, value);
  } else {
    throw fail(`path ${JSON.stringify(pointer)}: the parent of the target is not an object or array`);
  }
  return doc;
}

function remove(doc: unknown, pointer: string): { doc: unknown; removed: unknown } {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw fail('remove: the whole document cannot be removed');
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = arrayIndex(last);
    if (i === undefined || i >= parent.length) throw fail(`path ${JSON.stringify(pointer)} does not exist`);
    return { doc, removed: parent.splice(i, 1)[0] };
  }
  if (isObject(parent) && hasKey(parent, last)) {
    const removed = parent[last];
    delete parent[last];
    return { doc, removed };
  }
  throw fail(`path ${JSON.stringify(pointer)} does not exist`);
}

function replace(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const i = arrayIndex(last);
    if (i === undefined || i >= parent.length) throw fail(`path ${JSON.stringify(pointer)} does not exist`);
    parent[i] = value;
  } else if (isObject(parent) && hasKey(parent, last)) {
    setKey(parent, last, value);
  } else {
    throw fail(`path ${JSON.stringify(pointer)} does not exist`);
  }
  return doc;
}

function applyOne(doc: unknown, op: Operation, i: number): unknown {
  const needValue = (): unknown => {
    if (!op.hasValue) throw fail(`operation ${i} (${op.op}): missing "value"`);
    return cloneJson(op.value);
  };
  const needFrom = (): string => {
    if (op.from === undefined) throw fail(`operation ${i} (${op.op}): missing "from"`);
    return op.from;
  };
  switch (op.op) {
    case 'add':
      return add(doc, op.path, needValue());
    case 'remove':
      return remove(doc, op.path).doc;
    case 'replace':
      return replace(doc, op.path, needValue());
    case 'move': {
      const from = needFrom();
      if (from === op.path) return doc;
      if (op.path.startsWith(from + '/')) throw fail(`operation ${i} (move): "from" ${JSON.stringify(from)} is a proper prefix of "path" ${JSON.stringify(op.path)}`);
      const { doc: without, removed } = remove(doc, from);
      return add(without, op.path, removed);
    }
    case 'copy':
      return add(doc, op.path, cloneJson(get(doc, needFrom())));
    case 'test': {
      const expected = needValue();
      const actual = get(doc, op.path);
      if (!jsonEqual(actual, expected)) throw new TestFailedError('Unprocessable', `testing value ${op.path} failed`);
      return doc;
    }
    default:
      throw fail(`Unexpected kind: ${op.op}`);
  }
}

/** The patched copy of doc; doc itself is never changed. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  const ops = decodeOperations(patch);
  let out = cloneJson(doc);
  ops.forEach((op, i) => {
    out = applyOne(out, op, i);
  });
  return out;
}
