/**
 * Event (core v1): the legacy Event most event recorders still write (client-go's record package,
 * client-node's users). kube-apiserver holds it only to the legacy checks for backward compatibility
 * (ValidateEventCreate/Update stop there for v1), in its own field names: involvedObject,
 * reportingComponent, message. Expired after --event-ttl like events.orch.io Events.
 */
import { since } from '../api/human-duration.js';
import { legacyValidateEvent, type EventFieldNames } from './event.js';
import { numberAt, objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { microTimeSchema, timeSchema } from './meta-schema.js';
import { validateCoreObjectMeta } from './metadata.js';
import { int, obj, str } from '../api/schema.js';
import { CORE_V1, eventSourceSchema, objectReferenceSchema } from './shared-types.js';
import type { KindStrategy, TableColumn } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

const FIELDS: EventFieldNames = { regarding: 'involvedObject', reportingController: 'reportingComponent', note: 'message' };

const schema = kindSchema(`${CORE_V1}.Event`, 'A report of an event somewhere in the cluster.', {
  action: str('What action was taken or failed regarding the involved object.'),
  count: int('The number of times this event has occurred.'),
  eventTime: microTimeSchema,
  firstTimestamp: timeSchema,
  involvedObject: objectReferenceSchema,
  lastTimestamp: timeSchema,
  message: str('A human-readable description of the status of this operation.'),
  reason: str('Why the transition into the object’s current status happened, in CamelCase.'),
  related: objectReferenceSchema,
  reportingComponent: str('Name of the controller that emitted this Event, e.g. orch.io/kubelet.'),
  reportingInstance: str('ID of the controller instance, e.g. kubelet-xyzf.'),
  series: obj(
    `${CORE_V1}.EventSeries`,
    { count: int('Number of occurrences in this series up to the last heartbeat time.'), lastObservedTime: microTimeSchema },
    { description: 'Data about the Event series this event represents.' },
  ),
  source: eventSourceSchema,
  type: str('Type of this event (Normal, Warning); new types could be added in the future.'),
});

const validate = (o: KubeObject) => [...validateCoreObjectMeta(o.metadata), ...legacyValidateEvent(o, FIELDS)];

const str$ = (o: KubeObject, f: string) => stringAt(o, f);
/** When it was last seen: the series' heartbeat, the last timestamp, else the event time. */
const lastSeen = (o: KubeObject) => since(stringAt(objectAt(o, 'series'), 'lastObservedTime') || str$(o, 'lastTimestamp') || str$(o, 'eventTime') || undefined);
const involved = (f: string) => (o: KubeObject) => stringAt(objectAt(o, 'involvedObject'), f);

const tableColumns: TableColumn[] = [
  { name: 'Last Seen', type: 'string', priority: 0, description: 'Time the event was last seen.', cell: lastSeen },
  { name: 'Type', type: 'string', priority: 0, description: 'Type of the event.', cell: (o) => str$(o, 'type') },
  { name: 'Reason', type: 'string', priority: 0, description: 'Why the event happened.', cell: (o) => str$(o, 'reason') },
  { name: 'Object', type: 'string', priority: 0, description: 'The object the event is about.', cell: (o) => `${involved('kind')(o).toLowerCase()}/${involved('name')(o)}` },
  { name: 'Source', type: 'string', priority: 1, description: 'The component that reported the event.', cell: (o) => stringAt(objectAt(o, 'source'), 'component') || str$(o, 'reportingComponent') },
  { name: 'Message', type: 'string', priority: 0, description: 'Human-readable description of the event.', cell: (o) => str$(o, 'message').trim() },
  { name: 'Count', type: 'string', priority: 1, description: 'Number of occurrences.', cell: (o) => numberAt(objectAt(o, 'series'), 'count') ?? numberAt(o, 'count') ?? 1 },
  { name: 'Name', type: 'string', format: 'name', priority: 1, description: 'Name of the event.', cell: (o) => o.metadata.name ?? '' },
];

export const coreEvent = {
  group: '',
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
  applyDefaults() {},
  validate,
  tableColumns,
  tableIncludesName: true,
  fieldSelectors: {
    'involvedObject.kind': involved('kind'),
    'involvedObject.namespace': involved('namespace'),
    'involvedObject.name': involved('name'),
    'involvedObject.uid': involved('uid'),
    'involvedObject.apiVersion': involved('apiVersion'),
    'involvedObject.resourceVersion': involved('resourceVersion'),
    'involvedObject.fieldPath': involved('fieldPath'),
    reason: (o) => str$(o, 'reason'),
    reportingComponent: (o) => str$(o, 'reportingComponent'),
    source: (o) => stringAt(objectAt(o, 'source'), 'component') || str$(o, 'reportingComponent'),
    type: (o) => str$(o, 'type'),
  },
} satisfies KindStrategy;
