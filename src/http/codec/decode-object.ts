import { formatFieldError } from '../../api/field-errors.js';
import { isObject } from '../../api/json-access.js';
import type { KindStrategy } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { checkFields } from '../../api/field-check.js';
import { unknownFieldMessage } from '../../api/unknown-fields.js';
import { decodeBody, OBJECT_MEDIA_TYPES, readBody } from './body.js';
import type { Request } from '../context.js';
import type { FieldValidation } from './query.js';
import { badRequest } from '../respond/status.js';
import { stageLap, stageStart } from '../../observability/stage-timing.js';

export interface DecodedObject {
  obj: KubeObject;
  /** Warning headers to send (fieldValidation=Warn). */
  warnings: string[];
}

/**
 * A create or replace body as Kubernetes' decoder reads it: apiVersion and kind default to the
 * path's and must otherwise name this kind in a version it serves; values of the wrong JSON type
 * are a 400; unknown and duplicate fields are dropped, and reported by `fieldValidation`
 * (Strict → 400 naming every one, Warn → one Warning header each, Ignore → silence).
 */
export async function decodeObject(r: Request, fieldValidation: FieldValidation): Promise<DecodedObject> {
  const bytes = await readBody(r.req);
  let t = stageStart();
  const body = decodeBody(bytes, r.req.headers['content-type'], { accept: OBJECT_MEDIA_TYPES });
  t = stageLap('decode', t);
  const checked = checkObject(r.route.kind, r.route.version, body.value, body.duplicates, fieldValidation);
  stageLap('checks', t);
  return checked;
}

/** The checks of decodeObject on a value already decoded (a patched object goes through them too). */
export function checkObject(kind: KindStrategy, version: string, value: unknown, duplicates: readonly string[], fieldValidation: FieldValidation): DecodedObject {
  if (!isObject(value)) throw badRequest(`Object '${kind.kind}' is missing in '${JSON.stringify(value)}'`);
  const expected = kind.group ? `${kind.group}/${version}` : version;
  const apiVersion = value.apiVersion ?? expected;
  const gotKind = value.kind ?? kind.kind;
  if (typeof apiVersion !== 'string' || !servesApiVersion(kind, apiVersion)) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${expected})`);
  }
  if (gotKind !== kind.kind) throw badRequest(`the kind in the data (${String(gotKind)}) does not match the expected kind (${kind.kind})`);
  // Every served version has the same shape: the object is stored at the one the path names.
  // apiVersion and kind go first, where Kubernetes' serializer puts them, whatever the body's order
  // (both are strings that fit the schema: the checks below find the same in obj as in value).
  const { apiVersion: _a, kind: _k, ...rest } = value;
  const obj: Record<string, unknown> = { apiVersion: expected, kind: kind.kind, ...rest };
  obj.metadata ??= {};
  // Each list alone is in document order; only a mix of the two needs sorting (and the walk, before pruning).
  const order = duplicates.length > 0 ? documentOrder(obj) : undefined;
  // Types and unknown fields in one walk; unknown fields are pruned, which matters only if the types fit.
  // A kind that prunes on its own (a CRD's) leaves types to its validation.
  const found = kind.prune ? { typeErrors: [], unknown: kind.prune(obj).map((path) => ({ path, kind: 'unknown' as const })) } : checkFields(obj, kind.schema, ALL_CHECKS);
  if (found.typeErrors.length > 0) {
    throw badRequest(`${kind.kind} in version "${version}" cannot be handled as a ${kind.kind}: ${found.typeErrors.map(formatFieldError).join(', ')}`);
  }
  const unknown = found.unknown.map(unknownFieldMessage);
  const problems = order && unknown.length > 0 ? inDocumentOrder([...duplicates, ...unknown], order) : [...duplicates, ...unknown];
  if (problems.length > 0 && fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  return { obj: obj as KubeObject, warnings: fieldValidation === 'Warn' ? problems : [] };
}

const ALL_CHECKS = { types: true, unknown: true, prune: true };

function servesApiVersion(kind: KindStrategy, apiVersion: string): boolean {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  return group === kind.group && kind.versions.includes(apiVersion.slice(slash + 1));
}

/**
 * Field paths of a decoded value in document order (`spec.validations[0].expression`). A duplicated
 * key sits where it first appeared: the decoder keeps the first position and the last value.
 */
function documentOrder(value: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const visit = (v: unknown, path: string): void => {
    if (!order.has(path)) order.set(path, order.size);
    if (Array.isArray(v)) v.forEach((item, i) => visit(item, `${path}[${i}]`));
    else if (isObject(v)) for (const [k, item] of Object.entries(v)) visit(item, path ? `${path}.${k}` : k);
  };
  visit(value, '');
  return order;
}

/**
 * Kubernetes' decoder reports unknown and duplicate fields in one list, as it meets them in the
 * body; the two are found separately here, so they are merged back by where their field sits.
 */
function inDocumentOrder(problems: string[], order: Map<string, number>): string[] {
  const rank = (problem: string): number => {
    const quoted = /"((?:[^"\\]|\\.)*)"$/.exec(problem)?.[0];
    const path = quoted ? (JSON.parse(quoted) as string) : '';
    return order.get(path) ?? Number.MAX_SAFE_INTEGER;
  };
  return problems
    .map((p, i) => ({ p, i, r: rank(p) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.p);
}
