/**
 * Table answers (meta.k8s.io Table), what `kubectl get` asks for and prints as columns:
 * NAME, the kind's own columns, AGE; one row per object, each carrying the object's metadata as a
 * PartialObjectMetadata so kubectl can tell rows apart and follow a watch.
 *
 * The names meta.k8s.io, Table and PartialObjectMetadata are the protocol's, not served groups:
 * kubectl hard-codes them (with meta.orch.io it prints one empty row).
 */
import { since } from '../../api/human-duration.js';
import type { KindStrategy, TableColumn } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { parseAccept, rangeMatches, type MediaRange } from '../../discovery/accept.js';

export type TableVersion = 'v1' | 'v1beta1';
/** The includeObject query parameter: what each row's `object` holds. Metadata is the default. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

const acceptsJsonOrYaml = (r: MediaRange) => rangeMatches(r, 'application', 'json') || rangeMatches(r, 'application', 'yaml');

/**
 * The Table version an Accept header asks for, or undefined for the plain object or list.
 * Ranges are taken in the client's order of preference; the first one orchd can answer decides.
 * Conversions it does not offer (PartialObjectMetadataList, other Table versions) and media types it
 * does not serve are passed over, as kube-apiserver does.
 *
 *   kubectl get: `application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json` → 'v1'
 *   kubectl get -o yaml: `application/json` → undefined
 */
export function wantsTable(accept: string | string[] | undefined): TableVersion | undefined {
  for (const r of parseAccept(accept)) {
    if (!acceptsJsonOrYaml(r)) continue;
    if (r.params.as === undefined) return undefined;
    const v = servedTable(r);
    if (v) return v;
  }
  return undefined;
}

/** The Table version a range asks for when orchd serves it (meta.k8s.io Table v1 or v1beta1). */
export function servedTable(r: MediaRange): TableVersion | undefined {
  const { as, g, v } = r.params;
  return as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1') ? v : undefined;
}

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface TableOptions {
  /** Defaults to v1. */
  version?: TableVersion;
  /** Defaults to Metadata. */
  includeObject?: IncludeObject;
  /** The list's metadata, when the table renders a list (resourceVersion, continue, remainingItemCount). */
  listMeta?: Table['metadata'];
  /** Milliseconds since the epoch, for AGE; defaults to now. */
  now?: number;
}

/** A column and how to fill it; AGE needs the time of the answer. */
interface Column {
  definition: TableColumnDefinition;
  cell(obj: KubeObject, now: number): unknown;
}

// Descriptions are ObjectMeta's field docs, as the Kubernetes printers use.
const NAME: Column = {
  definition: {
    name: 'Name',
    type: 'string',
    format: 'name',
    description:
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.',
    priority: 0,
  },
  cell: (obj) => obj.metadata.name ?? '',
};
const AGE: Column = {
  definition: {
    name: 'Age',
    type: 'string',
    format: '',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
  },
  cell: (obj, now) => since(obj.metadata.creationTimestamp, now),
};

const kindColumn = (c: TableColumn): Column => ({
  definition: { name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority },
  cell: (obj) => c.cell(obj),
});

const columnsByKind = new WeakMap<KindStrategy, Column[]>();

/**
 * NAME, the kind's default columns, AGE, then its -o wide columns (priority 1), which is where the
 * Kubernetes printers put AGE. A kind that prints its own Name or Age column (Event lists NAME only
 * under -o wide, and no Age at all) keeps it where it is and gets no second one.
 */
function columnsOf(kind: KindStrategy): Column[] {
  let columns = columnsByKind.get(kind);
  if (!columns) {
    const has = (name: string) => kind.tableColumns.some((c) => c.name.toLowerCase() === name);
    const own = kind.tableColumns.map(kindColumn);
    // A kind that declares its whole table (Event) gets neither NAME nor AGE added.
    columns = kind.tableIncludesName
      ? own
      : [...(has('name') ? [] : [NAME]), ...own.filter((c) => c.definition.priority === 0), ...(has('age') ? [] : [AGE]), ...own.filter((c) => c.definition.priority !== 0)];
    columnsByKind.set(kind, columns);
  }
  return columns;
}

/**
 * A Table of one object (a get, or one watch event) or of a list. Without listMeta, a single
 * object's table carries that object's resourceVersion, as kube-apiserver's does.
 */
export function tableFor(kind: KindStrategy, objects: KubeObject | KubeObject[], opts: TableOptions = {}): Table {
  const items = Array.isArray(objects) ? objects : [objects];
  const apiVersion = `meta.k8s.io/${opts.version ?? 'v1'}`;
  const include = opts.includeObject ?? 'Metadata';
  const now = opts.now ?? Date.now();
  const columns = columnsOf(kind);
  const metadata: Table['metadata'] = opts.listMeta
    ? { ...opts.listMeta }
    : items.length === 1 && items[0].metadata.resourceVersion !== undefined
      ? { resourceVersion: items[0].metadata.resourceVersion }
      : {};
  return {
    kind: 'Table',
    apiVersion,
    metadata,
    columnDefinitions: columns.map((c) => c.definition),
    rows: items.map((obj) => ({
      cells: columns.map((c) => c.cell(obj, now)),
      ...(include === 'Object' ? { object: obj } : include === 'Metadata' ? { object: { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata } } : {}),
    })),
  };
}
