/**
 * Event (events.orch.io/v1): a report of something that happened to an object.
 *
 * Kubernetes validates events.k8s.io Events after converting them to the core Event, so its errors
 * name the core fields (involvedObject, message, count…). orchd serves only this version, so its
 * errors name this version's own fields (regarding, note, deprecatedCount…): a client can find the
 * field it sent.
 */
import { since } from '../api/human-duration.js';
import { FieldPath, invalid, required, type FieldError } from '../api/field-errors.js';
import { byteLength, jsonEqual, numberAt, objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { microTimeSchema, timeSchema } from './meta-schema.js';
import { validateCoreObjectMeta, validateImmutableField } from './metadata.js';
import { isDNS1123Subdomain, isQualifiedName } from '../api/name-formats.js';
import { int, obj, str } from '../api/schema.js';
import { eventSourceSchema, objectReferenceSchema } from './shared-types.js';
import type { KindStrategy, TableColumn } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

const EVENTS_V1 = 'io.orch.api.events.v1';
export const REPORTING_INSTANCE_MAX = 128;
export const ACTION_MAX = 128;
export const REASON_MAX = 128;
/** note may hold at most 1 kB; clients must still tolerate notes up to 64 kB. */
export const NOTE_MAX = 1024;
export const EVENT_TYPES = ['Normal', 'Warning'] as const;

const seriesSchema = obj(
  `${EVENTS_V1}.EventSeries`,
  {
    count: int('Occurrences in the series up to the last heartbeat.'),
    lastObservedTime: microTimeSchema,
  },
  { required: ['count', 'lastObservedTime'], description: 'A series of the same event happening repeatedly; absent for a singleton event.' },
);

const schema = kindSchema(`${EVENTS_V1}.Event`, 'A report of an event somewhere in the cluster, generally a state change.', {
  action: str('What was done or failed regarding the regarding object; machine-readable, at most 128 characters.'),
  deprecatedCount: int('Count of the older core Event, for backward compatibility.'),
  deprecatedFirstTimestamp: timeSchema,
  deprecatedLastTimestamp: timeSchema,
  deprecatedSource: eventSourceSchema,
  eventTime: microTimeSchema,
  note: str('Human-readable description of the status of the operation; at most 1 kB.'),
  reason: str('Why the action was taken; human-readable, at most 128 characters.'),
  regarding: objectReferenceSchema,
  related: objectReferenceSchema,
  reportingController: str('Name of the controller that emitted the event, e.g. orch.io/kubelet.'),
  reportingInstance: str('ID of the controller instance; at most 128 characters.'),
  series: seriesSchema,
  type: str('Normal or Warning; new types may be added later.'),
});
schema.required = ['eventTime'];

/** Go's zero time: absent, null, empty, or the year-1 instant a zero value serializes as. */
function isZeroTime(v: unknown): boolean {
  if (typeof v !== 'string' || v === '') return true;
  return Date.parse(v) === Date.parse('0001-01-01T00:00:00Z');
}

/** A comparable instant: the same moment written with different offsets compares equal. */
function instant(v: unknown): string {
  if (isZeroTime(v)) return '';
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/i.exec(v as string);
  return m ? `${Date.parse(m[1] + m[3])}.${(m[2] ?? '').padEnd(9, '0')}` : String(v);
}

const p = (path: string): FieldPath => FieldPath.root(path);

/** The names an Event version gives the fields legacy validation reads (core v1: involvedObject, reportingComponent, message). */
export interface EventFieldNames {
  regarding: string;
  reportingController: string;
  note: string;
}

const EVENTS_V1_FIELDS: EventFieldNames = { regarding: 'regarding', reportingController: 'reportingController', note: 'note' };

/** Checks every Event meets, new or updated (Kubernetes' legacyValidateEvent), in the field names of its version. */
export function legacyValidateEvent(o: KubeObject, f: EventFieldNames = EVENTS_V1_FIELDS): FieldError[] {
  const errs: FieldError[] = [];
  const ns = stringAt(o.metadata, 'namespace');
  const regardingNs = stringAt(objectAt(o, f.regarding), 'namespace');
  const mismatch = () => invalid(p(f.regarding).child('namespace'), regardingNs, 'does not match event.namespace');
  if (isZeroTime(o.eventTime)) {
    // An old-style event: the namespaces must agree ("default" stands in for none).
    if (!regardingNs ? ns !== '' && ns !== 'default' : ns !== regardingNs) errs.push(mismatch());
  } else {
    if (!regardingNs && ns !== 'default' && ns !== 'kube-system') errs.push(mismatch());
    const controller = stringAt(o, f.reportingController);
    if (!controller) errs.push(required(p(f.reportingController), ''));
    errs.push(...isQualifiedName(controller).map((m) => invalid(p(f.reportingController), controller, m)));
    const limited = (field: string, max: number) => {
      const v = stringAt(o, field);
      if (!v) errs.push(required(p(field), ''));
      if (byteLength(v) > max) errs.push(invalid(p(field), '', `can have at most ${max} characters`));
    };
    limited('reportingInstance', REPORTING_INSTANCE_MAX);
    limited('action', ACTION_MAX);
    limited('reason', REASON_MAX);
    if (byteLength(stringAt(o, f.note)) > NOTE_MAX) errs.push(invalid(p(f.note), '', `can have at most ${NOTE_MAX} characters`));
  }
  errs.push(...isDNS1123Subdomain(ns).map((m) => invalid(p('namespace'), ns, m)));
  return errs;
}

/** series, when present: at least 2 occurrences and a last observed time. */
function validateSeries(o: KubeObject): FieldError[] {
  const series = objectAt(o, 'series');
  if (!series) return [];
  const errs: FieldError[] = [];
  if ((numberAt(series, 'count') ?? 0) < 2) errs.push(invalid(p('series.count'), '', 'should be at least 2'));
  if (isZeroTime(series.lastObservedTime)) errs.push(required(p('series.lastObservedTime'), ''));
  return errs;
}

/**
 * A new Event: eventTime required; type Normal or Warning; the deprecated fields of the core Event
 * left unset; action, reason, reportingController and reportingInstance non-empty (legacyValidate).
 */
function validate(o: KubeObject): FieldError[] {
  const errs = legacyValidateEvent(o);
  errs.push(...validateCoreObjectMeta(o.metadata));
  errs.push(...validateSeries(o));
  if (isZeroTime(o.eventTime)) errs.push(required(p('eventTime'), ''));
  const type = stringAt(o, 'type');
  if (!(EVENT_TYPES as readonly string[]).includes(type)) errs.push(invalid(p('type'), '', `has invalid value: ${type}`));
  if (!isZeroTime(o.deprecatedFirstTimestamp)) errs.push(invalid(p('deprecatedFirstTimestamp'), '', 'needs to be unset'));
  if (!isZeroTime(o.deprecatedLastTimestamp)) errs.push(invalid(p('deprecatedLastTimestamp'), '', 'needs to be unset'));
  if ((numberAt(o, 'deprecatedCount') ?? 0) !== 0) errs.push(invalid(p('deprecatedCount'), '', 'needs to be unset'));
  const source = objectAt(o, 'deprecatedSource');
  if (stringAt(source, 'component') || stringAt(source, 'host')) errs.push(invalid(p('deprecatedSource'), '', 'needs to be unset'));
  return errs;
}

/**
 * An updated Event: still sane (legacyValidate), a changed series valid, and everything but series
 * and metadata immutable. Kubernetes checks reason twice, so it reports a changed reason twice.
 */
function validateUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const errs = legacyValidateEvent(o);
  errs.push(...validateCoreObjectMeta(o.metadata));
  if (!jsonEqual(o.series ?? null, old.series ?? null)) errs.push(...validateSeries(o));
  const ref = (x: KubeObject, f: string) => objectAt(x, f) ?? {};
  const text = (x: KubeObject, f: string) => stringAt(x, f);
  const checks: [string, (x: KubeObject) => unknown][] = [
    ['regarding', (x) => ref(x, 'regarding')],
    ['reason', (x) => text(x, 'reason')],
    ['note', (x) => text(x, 'note')],
    ['deprecatedSource', (x) => ref(x, 'deprecatedSource')],
    ['deprecatedFirstTimestamp', (x) => instant(x.deprecatedFirstTimestamp)],
    ['deprecatedLastTimestamp', (x) => instant(x.deprecatedLastTimestamp)],
    ['deprecatedCount', (x) => numberAt(x, 'deprecatedCount') ?? 0],
    ['reason', (x) => text(x, 'reason')],
    ['type', (x) => text(x, 'type')],
    ['eventTime', (x) => instant(x.eventTime)],
    ['action', (x) => text(x, 'action')],
    ['related', (x) => objectAt(x, 'related') ?? null],
    ['reportingController', (x) => text(x, 'reportingController')],
    ['reportingInstance', (x) => text(x, 'reportingInstance')],
  ];
  for (const [path, read] of checks) errs.push(...validateImmutableField(read(o), read(old), p(path)));
  return errs;
}

/** LAST SEEN, FIRST SEEN and COUNT as kubectl derives them from the old and new time fields. */
function timing(o: KubeObject): { first: string; last: string; count: number } {
  const first = !isZeroTime(o.deprecatedFirstTimestamp) ? since(o.deprecatedFirstTimestamp as string) : since(isZeroTime(o.eventTime) ? undefined : (o.eventTime as string));
  let last = !isZeroTime(o.deprecatedLastTimestamp) ? since(o.deprecatedLastTimestamp as string) : first;
  let count = numberAt(o, 'deprecatedCount') ?? 0;
  const series = objectAt(o, 'series');
  if (series) {
    last = since(isZeroTime(series.lastObservedTime) ? undefined : (series.lastObservedTime as string));
    count = numberAt(series, 'count') ?? 0;
  } else if (count === 0) {
    // A singleton event of the new API has no count.
    count = 1;
  }
  return { first, last, count };
}

/** The reporter: the old source component/host, else the reporting controller/instance. */
function sourceCell(o: KubeObject): string {
  const src = objectAt(o, 'deprecatedSource');
  const component = stringAt(src, 'component') || stringAt(o, 'reportingController');
  const host = stringAt(src, 'host') || stringAt(o, 'reportingInstance');
  return host ? `${component}, ${host}` : component;
}

function objectCell(o: KubeObject): string {
  const r = objectAt(o, 'regarding');
  const kind = stringAt(r, 'kind').toLowerCase();
  const name = stringAt(r, 'name');
  return name ? `${kind}/${name}` : kind;
}

const tableColumns: TableColumn[] = [
  { name: 'Last Seen', type: 'string', priority: 0, description: 'Time the event was last seen.', cell: (o) => timing(o).last },
  { name: 'Type', type: 'string', priority: 0, description: 'Type of the event: Normal or Warning.', cell: (o) => stringAt(o, 'type') },
  { name: 'Reason', type: 'string', priority: 0, description: 'Why the action was taken.', cell: (o) => stringAt(o, 'reason') },
  { name: 'Object', type: 'string', priority: 0, description: 'The object the event is about.', cell: objectCell },
  { name: 'Subobject', type: 'string', priority: 1, description: 'The part of the object the event is about.', cell: (o) => stringAt(objectAt(o, 'regarding'), 'fieldPath') },
  { name: 'Source', type: 'string', priority: 1, description: 'The component that reported the event.', cell: sourceCell },
  { name: 'Message', type: 'string', priority: 0, description: 'Human-readable description of the event.', cell: (o) => stringAt(o, 'note').trim() },
  { name: 'First Seen', type: 'string', priority: 1, description: 'Time the event was first seen.', cell: (o) => timing(o).first },
  { name: 'Count', type: 'string', priority: 1, description: 'Number of occurrences.', cell: (o) => timing(o).count },
  { name: 'Name', type: 'string', format: 'name', priority: 1, description: 'Name of the event.', cell: (o) => o.metadata.name ?? '' },
];

const regardingField = (f: string) => (o: KubeObject) => stringAt(objectAt(o, 'regarding'), f);

export const event = {
  group: 'events.orch.io',
  versions: ['v1'],
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  allowCreateOnUpdate: true,
  hasStatus: false,
  schema,
  // Events have no defaults in events/v1.
  applyDefaults() {},
  validate,
  validateUpdate,
  tableColumns,
  tableIncludesName: true,
  fieldSelectors: {
    'regarding.kind': regardingField('kind'),
    'regarding.namespace': regardingField('namespace'),
    'regarding.name': regardingField('name'),
    'regarding.uid': regardingField('uid'),
    'regarding.apiVersion': regardingField('apiVersion'),
    'regarding.resourceVersion': regardingField('resourceVersion'),
    'regarding.fieldPath': regardingField('fieldPath'),
    reason: (o) => stringAt(o, 'reason'),
    reportingController: (o) => stringAt(o, 'reportingController'),
    // The old source component when there is one, else the reporting controller.
    source: (o) => stringAt(objectAt(o, 'deprecatedSource'), 'component') || stringAt(o, 'reportingController'),
    type: (o) => stringAt(o, 'type'),
  },
} satisfies KindStrategy;
