/**
 * metadata.managedFields: which manager owns which fields, kept per (manager, operation,
 * apiVersion for updates, subresource) as Kubernetes keys them. Two operations change it:
 *
 * - Update (create, replace, JSON/merge/strategic patch): the manager takes every field it set or
 *   changed, from whoever owned it before (updates are always forced), and loses what it removed.
 * - Apply (server-side apply): the manager's set becomes exactly its configuration's fields. A field
 *   another manager owns whose value the apply would change is a conflict (409) unless forced, in
 *   which case ownership moves. Fields the manager applied last time and no longer applies are
 *   removed from the object when no one else owns them.
 *
 * System fields (apiVersion, kind, name, uid, resourceVersion, …) are never owned; on a kind with a
 * status subresource the main resource never owns status, and /status owns nothing else.
 */
import type { Schema } from '../api/schema.js';
import type { KubeObject } from '../api/types.js';
import { mergeApplied, prune } from './apply-merge.js';
import { PatchError, type FieldConflict, type ManagerId } from './errors.js';
import { compare, toFieldSet } from './field-walk.js';
import { FieldSet, formatPath } from './field-set.js';
import { isObject } from '../api/json-access.js';
import { createdFieldsV1, SYSTEM_METADATA } from './created-fields.js';

export interface ManagedEntry {
  id: ManagerId;
  time?: string;
  set: FieldSet;
}

/** What one write is: the kind's schema, the version and subresource written, and the time. */
export interface WriteScope {
  schema: Schema;
  /** apiVersion the request used, e.g. admissionregistration.orch.io/v1. */
  apiVersion: string;
  subresource?: 'status';
  /** The kind has a /status subresource, so the main resource does not own status. */
  hasStatus: boolean;
  /** RFC 3339 time recorded on the acting manager's entry. */
  now: string;
}

/**
 * The fields this write may own (Kubernetes' stripMeta and reset fields), taken out of set itself:
 * every caller hands over a set it just made. created-fields.ts does the same for a create.
 */
function ownable(set: FieldSet, scope: WriteScope): FieldSet {
  const out = set;
  out.children.delete('f:apiVersion');
  out.children.delete('f:kind');
  const meta = out.child('f:metadata');
  if (meta) {
    for (const f of SYSTEM_METADATA) meta.children.delete(`f:${f}`);
    meta.member = false;
    if (meta.isEmpty()) out.children.delete('f:metadata');
  }
  if (scope.subresource === 'status') {
    for (const k of [...out.children.keys()]) if (k !== 'f:status') out.children.delete(k);
  } else if (scope.hasStatus) {
    out.children.delete('f:status');
  }
  // Top-level structs (spec, status) always exist in Kubernetes' typed objects, so they are never
  // owned as a whole, only through their members; a top-level scalar (an Event's note, reason,
  // eventTime) is a leaf and owned as itself.
  out.member = false;
  for (const [k, c] of out.children) if (c.children.size > 0 || k === 'f:spec' || k === 'f:status') c.member = false;
  return out;
}

/** One entry per (manager, operation, apiVersion of an Update, subresource). */
const sameId = (p: ManagerId, q: ManagerId): boolean =>
  p.manager === q.manager && p.operation === q.operation && (p.operation !== 'Update' || p.apiVersion === q.apiVersion) && (p.subresource ?? '') === (q.subresource ?? '');

/** managedFields as stored; undefined when the list is not one Kubernetes would accept. */
export function decodeManagedFields(list: unknown): ManagedEntry[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: ManagedEntry[] = [];
  for (const e of list) {
    if (!isObject(e)) return undefined;
    const { manager, operation, apiVersion, subresource, time, fieldsType, fieldsV1 } = e;
    if (typeof manager !== 'string' || (operation !== 'Apply' && operation !== 'Update')) return undefined;
    if (fieldsType !== undefined && fieldsType !== 'FieldsV1') return undefined;
    const id: ManagerId = { manager, operation, apiVersion: typeof apiVersion === 'string' ? apiVersion : '' };
    if (typeof subresource === 'string' && subresource !== '') id.subresource = subresource;
    out.push({ id, ...(typeof time === 'string' ? { time } : {}), set: FieldSet.fromFieldsV1(fieldsV1) });
  }
  return out;
}

/** The stored form, in Kubernetes' order: Apply before Update, then by time, manager, version, subresource. */
export function encodeManagedFields(entries: readonly ManagedEntry[]): Record<string, unknown>[] {
  const sorted = [...entries].sort((p, q) => {
    if (p.id.operation !== q.id.operation) return p.id.operation < q.id.operation ? -1 : 1;
    const pt = p.time ? Date.parse(p.time) : 0;
    const qt = q.time ? Date.parse(q.time) : 0;
    if (pt !== qt) return pt - qt;
    for (const k of ['manager', 'apiVersion', 'subresource'] as const) {
      const a = p.id[k] ?? '';
      const b = q.id[k] ?? '';
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  });
  return sorted.map((e) => ({
    manager: e.id.manager,
    operation: e.id.operation,
    apiVersion: e.id.apiVersion,
    ...(e.time ? { time: e.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: e.set.toFieldsV1(),
    ...(e.id.subresource ? { subresource: e.id.subresource } : {}),
  }));
}

/**
 * The entries a write starts from. A request may set managedFields itself (Kubernetes lets clients
 * rewrite them); absent or an empty list keeps the live ones, so clients unaware of the field never
 * wipe it. A list with nothing valid in it, such as `[{}]`, resets tracking: undefined.
 */
export function startingEntries(live: KubeObject | undefined, next: KubeObject, scope: WriteScope): ManagedEntry[] | undefined {
  const liveEntries = decodeManagedFields(live?.metadata.managedFields) ?? [];
  const given = next.metadata.managedFields;
  if (scope.subresource || given === undefined || (Array.isArray(given) && given.length === 0)) return liveEntries;
  if (Array.isArray(given) && given.every((e) => isObject(e) && Object.keys(e).length === 0)) return undefined;
  return decodeManagedFields(given) ?? liveEntries;
}

function withoutManagedFields(o: KubeObject | undefined): KubeObject | undefined {
  if (!o) return undefined;
  const { managedFields: _mf, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/** Keeps the non-empty entries, the acting manager's replaced by `own`. */
function finish(entries: ManagedEntry[], own: ManagedEntry): ManagedEntry[] {
  const out = entries.filter((e) => !sameId(e.id, own.id) && !e.set.isEmpty());
  if (!own.set.isEmpty()) out.push(own);
  return out;
}

/**
 * An Update by `manager`: `next` is the object about to be written (defaults applied), `live` the
 * stored one (undefined on create). Returns the new managedFields, or undefined when the request
 * reset them.
 *
 * Recording never fails the write, as Kubernetes' UpdateNoErrors: an object the field sets cannot
 * describe (a keyed-list item without its key) gets no managedFields, and validation then answers
 * the client with the field at fault.
 */
export function recordUpdate(live: KubeObject | undefined, next: KubeObject, manager: string, scope: WriteScope): Record<string, unknown>[] | undefined {
  try {
    return updateEntries(live, next, manager, scope);
  } catch (err) {
    if (err instanceof PatchError) return undefined;
    throw err;
  }
}

function updateEntries(live: KubeObject | undefined, next: KubeObject, manager: string, scope: WriteScope): Record<string, unknown>[] | undefined {
  const entries = startingEntries(live, next, scope);
  if (entries === undefined) return undefined;
  if (!live && entries.length === 0) {
    // A create with no managers yet: every field it sets is the manager's, built as FieldsV1 at once.
    const fieldsV1 = createdFieldsV1(withoutManagedFields(next)!, scope.schema, scope);
    if (fieldsV1 === undefined) return [];
    return [{ manager, operation: 'Update', apiVersion: scope.apiVersion, time: scope.now, fieldsType: 'FieldsV1', fieldsV1, ...(scope.subresource ? { subresource: scope.subresource } : {}) }];
  }
  const c = compare(withoutManagedFields(live), withoutManagedFields(next), scope.schema);
  const changed = ownable(c.modified.union(c.added), scope);
  const removed = ownable(c.removed, scope);
  const id: ManagerId = { manager, operation: 'Update', apiVersion: scope.apiVersion, ...(scope.subresource ? { subresource: scope.subresource } : {}) };
  const prev = entries.find((e) => sameId(e.id, id));
  const others = entries.filter((e) => !sameId(e.id, id)).map((e) => ({ ...e, set: e.set.difference(changed).difference(removed) }));
  // The time moves only when this write changed something of the manager's, so a no-op write stays one.
  const time = changed.isEmpty() && removed.isEmpty() && prev?.time ? prev.time : scope.now;
  const own: ManagedEntry = { id, time, set: (prev?.set ?? new FieldSet()).difference(removed).union(changed) };
  return encodeManagedFields(finish(others, own));
}

export interface ApplyResult {
  obj: KubeObject;
  managedFields: Record<string, unknown>[];
}

/**
 * Server-side apply of `config` by `manager` to `live` (undefined: the object is created). Throws a
 * Conflict PatchError listing each field another manager owns with another value, unless force.
 */
export function applyConfig(live: KubeObject | undefined, config: KubeObject, manager: string, force: boolean, scope: WriteScope): ApplyResult {
  if (config.metadata.managedFields !== undefined) throw new PatchError('BadPatch', 'metadata.managedFields must be nil');
  const entries = decodeManagedFields(live?.metadata.managedFields) ?? [];
  const id: ManagerId = { manager, operation: 'Apply', apiVersion: scope.apiVersion, ...(scope.subresource ? { subresource: scope.subresource } : {}) };
  const last = entries.find((e) => sameId(e.id, id));
  const others = entries.filter((e) => !sameId(e.id, id));
  const base = withoutManagedFields(live);
  const applied = ownable(toFieldSet(config, scope.schema), scope);

  let merged = mergeApplied(base ?? {}, config, scope.schema) as KubeObject;
  if (last && !last.set.isEmpty()) {
    const keep = others.reduce((acc, e) => acc.union(e.set), applied);
    merged = prune(merged, last.set, keep, scope.schema) as KubeObject;
  }

  const c = compare(base, merged, scope.schema);
  // Before ownable takes the system fields out of c.removed.
  const unchanged = c.added.isEmpty() && c.modified.isEmpty() && c.removed.isEmpty();
  const changed = ownable(c.modified.union(c.added), scope);
  const removed = ownable(c.removed, scope);
  const conflicts: FieldConflict[] = [];
  for (const e of others) {
    for (const path of e.set.intersection(changed).paths()) conflicts.push({ manager: e.id, path: formatPath(path) });
  }
  if (conflicts.length > 0 && !force) throw new PatchError('Conflict', conflictMessage(conflicts), conflicts);
  const rest = others.map((e) => ({ ...e, set: e.set.difference(changed).difference(removed) }));
  const own: ManagedEntry = { id, time: unchanged && last?.time ? last.time : scope.now, set: applied };
  merged.metadata ??= {};
  return { obj: merged, managedFields: encodeManagedFields(finish(rest, own)) };
}

/** A manager as Kubernetes names it in conflicts: `"kubectl-client-side-apply" using admissionregistration.orch.io/v1`. */
export function describeManager(id: ManagerId): string {
  let s = JSON.stringify(id.manager);
  if (id.subresource) s += ` with subresource ${JSON.stringify(id.subresource)}`;
  if (id.operation === 'Update') s += ` using ${id.apiVersion}`;
  return s;
}

/** Kubernetes' wording: one conflict inline, several grouped by manager (managers sorted). */
export function conflictMessage(conflicts: readonly FieldConflict[]): string {
  if (conflicts.length === 1) return `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0].manager)}: ${conflicts[0].path}`;
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const m = describeManager(c.manager);
    byManager.set(m, [...(byManager.get(m) ?? []), c.path]);
  }
  const lines: string[] = [];
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${m}`);
    for (const p of byManager.get(m)!) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
