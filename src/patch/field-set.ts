/**
 * A set of field paths as server-side apply tracks ownership, stored as a trie whose edges are the
 * path elements of Kubernetes' FieldsV1 format:
 *
 *   f:<name>          a member of an object           (printed `.name`)
 *   k:{"name":"a"}    the item of a keyed list        (printed `[name="a"]`)
 *   v:<json>          the value of a set list         (printed `[="x"]`)
 *
 * A node is a member when the path itself is in the set. In FieldsV1 a member with children is
 * marked by a `.` child; a member leaf is `{}`:
 *
 *   { "f:spec": { "f:matchConditions": { "k:{\"name\":\"a\"}": { ".": {}, "f:expression": {} } } } }
 */
import { isObject, type JsonObject } from '../api/json-access.js';

export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  static fromPaths(paths: readonly (readonly string[])[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Reads FieldsV1; anything that is not an object of objects reads as empty. */
  static fromFieldsV1(v: unknown): FieldSet {
    const s = new FieldSet();
    if (!isObject(v)) return s;
    for (const [k, child] of Object.entries(v)) {
      if (k === '.') s.member = true;
      else {
        const c = FieldSet.fromFieldsV1(child);
        if (!isObject(child) || Object.keys(child).length === 0) c.member = true;
        s.children.set(k, c);
      }
    }
    return s;
  }

  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    if (this.member && this.children.size > 0) out['.'] = {};
    for (const k of [...this.children.keys()].sort(compareElements)) out[k] = this.children.get(k)!.toFieldsV1();
    return out;
  }

  insert(path: readonly string[]): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk starts here and goes down the children
    let node: FieldSet = this;
    for (const pe of path) {
      let next = node.children.get(pe);
      if (!next) {
        next = new FieldSet();
        node.children.set(pe, next);
      }
      node = next;
    }
    node.member = true;
  }

  child(pe: string): FieldSet | undefined {
    return this.children.get(pe);
  }

  isEmpty(): boolean {
    return !this.member && [...this.children.values()].every((c) => c.isEmpty());
  }

  clone(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [k, c] of this.children) s.children.set(k, c.clone());
    return s;
  }

  /** Paths in either set. */
  union(other: FieldSet | undefined): FieldSet {
    const s = this.clone();
    if (other) mergeInto(s, other);
    return s;
  }

  /** Paths of this set that are not paths of other (exact paths: a member's descendants stay). */
  difference(other: FieldSet | undefined): FieldSet {
    const s = new FieldSet();
    s.member = this.member && !(other?.member ?? false);
    for (const [k, c] of this.children) {
      const d = c.difference(other?.children.get(k));
      if (!d.isEmpty()) s.children.set(k, d);
    }
    return s;
  }

  /** Paths in both sets. */
  intersection(other: FieldSet | undefined): FieldSet {
    const s = new FieldSet();
    if (!other) return s;
    s.member = this.member && other.member;
    for (const [k, c] of this.children) {
      const o = other.children.get(k);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.isEmpty()) s.children.set(k, i);
    }
    return s;
  }

  /** Every member path, parents before children, in FieldsV1 order. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.member && prefix.length > 0) out.push(prefix);
    for (const k of [...this.children.keys()].sort(compareElements)) out.push(...this.children.get(k)!.paths([...prefix, k]));
    return out;
  }
}

function mergeInto(target: FieldSet, other: FieldSet): void {
  target.member ||= other.member;
  for (const [k, c] of other.children) {
    const t = target.children.get(k);
    if (t) mergeInto(t, c);
    else target.children.set(k, c.clone());
  }
}

/** An element's rank by its first letter: f, v, k, i (anything else before them, as indexOf's -1 put it). */
const rank = (c: number): number => (c === 0x66 ? 0 : c === 0x76 ? 1 : c === 0x6b ? 2 : c === 0x69 ? 3 : -1);

/** Fields, then values, then keys, each sorted by text (structured-merge-diff's element order). */
function compareElements(a: string, b: string): number {
  const d = rank(a.charCodeAt(0)) - rank(b.charCodeAt(0));
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}

export const fieldElement = (name: string): string => `f:${name}`;
export const valueElement = (v: unknown): string => `v:${JSON.stringify(v)}`;

/** `k:{…}` of a keyed-list item: its key fields, sorted by name. Undefined when a key field is missing. */
export function keyElement(item: unknown, keys: readonly string[]): string | undefined {
  if (!isObject(item)) return undefined;
  const fields: JsonObject = {};
  for (const k of [...keys].sort()) {
    if (item[k] === undefined || item[k] === null) return undefined;
    fields[k] = item[k];
  }
  return `k:${JSON.stringify(fields)}`;
}

/** A path as server-side apply prints it in conflicts: `.spec.matchConditions[name="a"].expression`. */
export function formatPath(path: readonly string[]): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return '.' + body;
        case 'k': {
          const fields = JSON.parse(body) as JsonObject;
          return (
            '[' +
            Object.entries(fields)
              .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
              .join(',') +
            ']'
          );
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
