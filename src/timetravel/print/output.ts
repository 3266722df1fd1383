/**
 * How the time-travel commands print: kubectl-like tables, YAML documents, JSON lines, JSON patches
 * (YAML diffs: yaml-diff.ts). YAML is loaded when a command prints it (yaml-text.ts): a command's
 * time includes node loading its modules.
 */
import fastJsonPatch from 'fast-json-patch';
import { JsonLines } from '../../log/msgpack-json.js';
import type { KubeObject } from '../../api/types.js';
import { splitKey } from '../../api/object-keys.js';
import { attribution } from '../../store/versions.js';
import type { Refused } from '../core/audit-events.js';
import type { Change, Stored } from '../core/history.js';

export type Format = 'table' | 'yaml' | 'json';

/** `plural.group`, as kubectl names a resource (`namespaces` for the core group), from the key (`<group>/<plural>/…`): a custom kind's as a built-in kind's. */
export function resourceOf(key: string): string {
  const { collection } = splitKey(key);
  const slash = collection.indexOf('/');
  return slash <= 0 ? collection.slice(slash + 1) : `${collection.slice(slash + 1)}.${collection.slice(0, slash)}`;
}

export function namesOf(key: string): { namespace: string; name: string } {
  const { suffix } = splitKey(key);
  const slash = suffix.indexOf('/');
  return { namespace: suffix.slice(0, slash), name: suffix.slice(slash + 1) };
}

export const formatTime = (ms: number | undefined, exact: boolean): string =>
  ms === undefined ? '<unknown>' : exact ? new Date(ms).toISOString() : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A table's lines, one at a time, columns padded as kubectl pads them: each as wide as its widest cell, three spaces apart. */
export function* tableLines(header: string[], rows: string[][]): Iterable<string> {
  const widths = header.map((h) => h.length);
  // Not Math.max(...cells): a million arguments overflow the stack.
  for (const r of rows) for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i], r[i].length);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd() + '\n';
  yield line(header);
  for (const r of rows) yield line(r);
}

/**
 * Who made a change, as a MANAGER column says it: the field manager and the verb (and subresource)
 * the log kept with the entry. An entry written before the log kept writers is guessed from the
 * object's managedFields (the entry this write changed), and says so with a `?`.
 */
export function managerOf(c: Change, before?: KubeObject): string {
  const w = c.writer;
  // A controller's delete names a verb and no field manager: '- (delete)'.
  if (w) return `${w.manager ?? '-'}${w.verb ? ` (${w.verb}${w.subresource ? `/${w.subresource}` : ''})` : ''}`;
  const a = attribution(c.object, before);
  return a ? `${a.manager}? (${a.operation})` : '<unknown>';
}

/** The user who made a change, as the log kept it. */
export const userOf = (c: Change): string => c.writer?.user ?? '<unknown>';

/** The object as printed: without metadata.managedFields unless they are asked for (kubectl's --show-managed-fields). */
export function shown(o: KubeObject, managedFields: boolean): KubeObject {
  if (managedFields || o.metadata?.managedFields === undefined) return o;
  const { managedFields: _hidden, ...metadata } = o.metadata;
  return { ...o, metadata } as KubeObject;
}

/** A change as one JSON value: what `-o json` prints per line and `-o yaml` per document (metadata.managedFields left out unless asked for). */
export function changeJson(c: Change, timesFromLog: boolean, managedFields = false): Record<string, unknown> {
  return {
    resourceVersion: String(c.rv),
    time: c.time === undefined ? null : formatTime(c.time, timesFromLog),
    timeSource: timesFromLog ? 'log' : 'object-timestamps',
    type: c.type,
    resource: resourceOf(c.key),
    writer: c.writer ?? null,
    object: shown(c.object, managedFields),
  };
}

/** A refused write (from an audit log: ../core/audit-events.ts) as one JSON value, beside the changes' ones. */
function refusedJson(r: Refused): Record<string, unknown> {
  const { namespace, name } = namesOf(r.key);
  if ('fault' in r && 'afterRv' in r)
    return {
      resourceVersion: null,
      afterResourceVersion: String(r.afterRv),
      time: formatTime(r.time, true),
      type: 'FAULT',
      fault: r.fault,
      rule: r.reason,
      resource: resourceOf(r.key),
      namespace,
      name,
      verb: r.verb,
      user: r.user,
    };
  return {
    resourceVersion: null,
    time: formatTime(r.time, true),
    type: 'REFUSED',
    resource: resourceOf(r.key),
    namespace,
    name,
    verb: r.verb,
    user: r.user,
    manager: r.manager ?? null,
    code: r.code,
    reason: r.reason,
    message: r.message,
  };
}

const isRefused = (c: Change | Refused): c is Refused => 'refused' in c;

/** The changes as they come, in pieces to write one after another (a log of a million entries is more text than one string may hold); a table once all rows are known, its columns as wide as their widest cell. */
export async function* printChanges(changes: AsyncIterable<Change | Refused>, format: Format, timesFromLog: boolean, header = true, managedFields = false): AsyncIterable<string> {
  if (format === 'json') {
    for await (const c of changes) yield JSON.stringify(isRefused(c) ? refusedJson(c) : changeJson(c, timesFromLog, managedFields)) + '\n';
    return;
  }
  if (format === 'yaml') {
    const { stringify } = await import('./yaml-text.js');
    for await (const c of changes) yield `---\n${stringify(isRefused(c) ? refusedJson(c) : changeJson(c, timesFromLog, managedFields))}`;
    return;
  }
  const columns = ['RESOURCEVERSION', 'TIME', 'EVENT', 'RESOURCE', 'NAMESPACE', 'NAME', 'USER', 'MANAGER'];
  const rowOf = (c: Change | Refused): string[] => {
    const { namespace, name } = namesOf(c.key);
    if (isRefused(c) && 'fault' in c && 'afterRv' in c)
      return [`(${String(c.afterRv)})`, formatTime(c.time, true), `FAULT ${String(c.fault)}`, resourceOf(c.key), namespace, name || '-', c.user, `- (${c.verb})`];
    if (isRefused(c)) return ['-', formatTime(c.time, true), `REFUSED ${c.code}`, resourceOf(c.key), namespace, name || '-', c.user, `${c.manager ?? '-'} (${c.verb})`];
    return [String(c.rv), formatTime(c.time, timesFromLog), c.type, resourceOf(c.key), namespace, name, userOf(c), managerOf(c)];
  };
  if (!header) {
    // Rows that go on coming (--follow) are printed as they come, as kubectl get -w prints them.
    for await (const c of changes) yield [...tableLines(columns, [rowOf(c)])][1];
    return;
  }
  const rows: string[][] = [];
  for await (const c of changes) rows.push(rowOf(c));
  yield* tableLines(columns, rows);
}

/**
 * The state at rv from its pages, in pieces to write one after another: a state of a million
 * objects is more text than one string may hold. JSON lines come from the stored bytes where the
 * reader has them.
 */
export async function* printState(rv: number, pages: AsyncIterable<Stored[]> | Iterable<Stored[]>, format: Format, managedFields = false): AsyncIterable<string | Buffer> {
  if (format === 'json') {
    // A page's lines into one buffer: a piece per object, each through an async generator, cost as much as making them.
    const lines = new JsonLines(!managedFields);
    for await (const page of pages) {
      for (const s of page) {
        // JSON the server wrote is passed through, unless it holds managedFields that are to be hidden.
        const json = s.json?.();
        if (json && (managedFields || !json.includes('"managedFields"'))) lines.addJson(json);
        else {
          const bytes = json ? undefined : s.msgpack?.();
          if (!bytes || !lines.add(bytes)) lines.addText(JSON.stringify(shown(s.object, managedFields)) + '\n');
        }
      }
      if (lines.length > 0) yield lines.take();
    }
    return;
  }
  if (format === 'yaml') {
    const { stringify } = await import('./yaml-text.js');
    // As stringify of the whole List writes it, an item at a time: each item stringified at its place in it.
    const head = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: String(rv) } };
    let any = false;
    for await (const page of pages) {
      for (const s of page) {
        if (!any) yield stringify(head) + 'items:\n';
        any = true;
        yield stringify({ items: [shown(s.object, managedFields)] }).slice('items:\n'.length);
      }
    }
    if (!any) yield stringify({ ...head, items: [] });
    return;
  }
  const rows: string[][] = [];
  for await (const page of pages) {
    for (const s of page) {
      const { namespace, name } = namesOf(s.key);
      rows.push([resourceOf(s.key), namespace, name, String(s.object.metadata.resourceVersion), String(s.object.metadata.creationTimestamp ?? '')]);
    }
  }
  yield* tableLines(['RESOURCE', 'NAMESPACE', 'NAME', 'RESOURCEVERSION', 'CREATED'], rows);
}

/**
 * An RFC 6902 patch from a to b. An object that appears is one add of the whole document; one that
 * goes is one remove of it (path "", the document itself).
 */
export function jsonPatch(a: KubeObject | undefined, b: KubeObject | undefined): unknown[] {
  if (a === undefined) return b === undefined ? [] : [{ op: 'add', path: '', value: b }];
  if (b === undefined) return [{ op: 'remove', path: '' }];
  return fastJsonPatch.compare(a, b);
}

export const labelOf = (key: string): string => {
  const { namespace, name } = namesOf(key);
  return `${resourceOf(key)}/${namespace ? `${namespace}/` : ''}${name}`;
};
