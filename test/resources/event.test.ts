import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { event as kind } from '../../src/resources/event.js';
import { fixtures, pairs, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.event);

describe('Event validation on create (paths name the core Event fields, as Kubernetes reports them)', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['Warning is a type', (o) => (o.type = 'Warning'), []],
    ['eventTime is required', (o) => delete o.eventTime, [['FieldValueRequired', 'eventTime']]],
    ['type must be Normal or Warning', (o) => (o.type = 'Info'), [['FieldValueInvalid', 'type']]],
    ['type is required', (o) => delete o.type, [['FieldValueInvalid', 'type']]],
    ['action is required', (o) => (o.action = ''), [['FieldValueRequired', 'action']]],
    ['action at most 128 characters', (o) => (o.action = 'a'.repeat(129)), [['FieldValueInvalid', 'action']]],
    ['reason is required', (o) => delete o.reason, [['FieldValueRequired', 'reason']]],
    ['reason at most 128 characters', (o) => (o.reason = 'r'.repeat(129)), [['FieldValueInvalid', 'reason']]],
    ['reason of 128 characters is fine', (o) => (o.reason = 'r'.repeat(128)), []],
    ['reportingInstance is required', (o) => (o.reportingInstance = ''), [['FieldValueRequired', 'reportingInstance']]],
    ['reportingInstance at most 128 characters', (o) => (o.reportingInstance = 'i'.repeat(129)), [['FieldValueInvalid', 'reportingInstance']]],
    [
      'reportingController is required (and so not a qualified name)',
      (o) => delete o.reportingController,
      [
        ['FieldValueRequired', 'reportingController'],
        ['FieldValueInvalid', 'reportingController'],
        ['FieldValueInvalid', 'reportingController'],
      ],
    ],
    ['reportingController is a qualified name', (o) => (o.reportingController = 'not a name'), [['FieldValueInvalid', 'reportingController']]],
    ['note at most 1 kB', (o) => (o.note = 'n'.repeat(1025)), [['FieldValueInvalid', 'note']]],
    ['note of 1024 bytes is fine', (o) => (o.note = 'n'.repeat(1024)), []],
    ['series: count at least 2', (o) => (o.series = { count: 1, lastObservedTime: '2026-01-02T03:04:06.000000Z' }), [['FieldValueInvalid', 'series.count']]],
    ['series: lastObservedTime required', (o) => (o.series = { count: 2 }), [['FieldValueRequired', 'series.lastObservedTime']]],
    ['series: a valid series', (o) => (o.series = { count: 5, lastObservedTime: '2026-01-02T03:04:06.000000Z' }), []],
    ['deprecatedFirstTimestamp must be unset', (o) => (o.deprecatedFirstTimestamp = '2026-01-01T00:00:00Z'), [['FieldValueInvalid', 'deprecatedFirstTimestamp']]],
    ['deprecatedLastTimestamp must be unset', (o) => (o.deprecatedLastTimestamp = '2026-01-01T00:00:00Z'), [['FieldValueInvalid', 'deprecatedLastTimestamp']]],
    ['deprecatedCount must be unset', (o) => (o.deprecatedCount = 3), [['FieldValueInvalid', 'deprecatedCount']]],
    ['deprecatedSource must be unset', (o) => (o.deprecatedSource = { component: 'kubelet' }), [['FieldValueInvalid', 'deprecatedSource']]],
    ['an empty deprecatedSource is unset', (o) => (o.deprecatedSource = {}), []],
    [
      'regarding a cluster-scoped object needs the default or kube-system namespace',
      (o) => {
        o.metadata.namespace = 'team-a';
        o.regarding = { kind: 'Node', name: 'node-1' };
      },
      [['FieldValueInvalid', 'regarding.namespace']],
    ],
    ['regarding a cluster-scoped object from default is fine', (o) => (o.regarding = { kind: 'Node', name: 'node-1' }), []],
    ['regarding another namespace is fine for new events', (o) => (o.regarding.namespace = 'other'), []],
    ['metadata.finalizers without a domain must be standard ones', (o) => (o.metadata.finalizers = ['orphan', 'cleanup']), [['FieldValueInvalid', 'metadata.finalizers']]],
  ];
  it.each(rows)('%s', run);
});

describe('Event validation on update', () => {
  const update = (mutate: (o: any) => void) => {
    const old = fixtures.event();
    const o = structuredClone(old);
    mutate(o);
    return pairs(kind.validateUpdate(o, old));
  };

  it.each([
    ['an unchanged event', () => {}, []],
    ['series may change', (o: any) => (o.series = { count: 2, lastObservedTime: '2026-01-02T03:05:00.000000Z' }), []],
    ['a changed series is validated', (o: any) => (o.series = { count: 1, lastObservedTime: '2026-01-02T03:05:00.000000Z' }), [['FieldValueInvalid', 'series.count']]],
    ['regarding is immutable', (o: any) => (o.regarding.name = 'web-2'), [['FieldValueInvalid', 'regarding']]],
    ['note is immutable', (o: any) => (o.note = 'changed'), [['FieldValueInvalid', 'note']]],
    // Kubernetes checks reason twice, so a changed reason is reported twice.
    [
      'reason is immutable',
      (o: any) => (o.reason = 'Moved'),
      [
        ['FieldValueInvalid', 'reason'],
        ['FieldValueInvalid', 'reason'],
      ],
    ],
    ['type is immutable (no Normal/Warning check on update)', (o: any) => (o.type = 'Odd'), [['FieldValueInvalid', 'type']]],
    ['eventTime is immutable', (o: any) => (o.eventTime = '2026-01-02T03:04:06.123456Z'), [['FieldValueInvalid', 'eventTime']]],
    ['eventTime in another offset is the same instant', (o: any) => (o.eventTime = '2026-01-02T04:04:05.123456+01:00'), []],
    ['action is immutable', (o: any) => (o.action = 'Other'), [['FieldValueInvalid', 'action']]],
    ['related is immutable', (o: any) => (o.related = { kind: 'Node', name: 'n' }), [['FieldValueInvalid', 'related']]],
    ['reportingController is immutable', (o: any) => (o.reportingController = 'orch.io/other'), [['FieldValueInvalid', 'reportingController']]],
    ['reportingInstance is immutable', (o: any) => (o.reportingInstance = 'other'), [['FieldValueInvalid', 'reportingInstance']]],
    ['deprecatedSource is immutable', (o: any) => (o.deprecatedSource = { component: 'x' }), [['FieldValueInvalid', 'deprecatedSource']]],
    ['deprecatedCount is immutable', (o: any) => (o.deprecatedCount = 2), [['FieldValueInvalid', 'deprecatedCount']]],
    ['deprecatedFirstTimestamp is immutable', (o: any) => (o.deprecatedFirstTimestamp = '2026-01-01T00:00:00Z'), [['FieldValueInvalid', 'deprecatedFirstTimestamp']]],
    ['deprecatedLastTimestamp is immutable', (o: any) => (o.deprecatedLastTimestamp = '2026-01-01T00:00:00Z'), [['FieldValueInvalid', 'deprecatedLastTimestamp']]],
    ['labels may change', (o: any) => (o.metadata.labels = { a: 'b' }), []],
  ])('%s', (_n, mutate, want) => expect(update(mutate)).toEqual(want));
});

describe('Event table (kubectl get events)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-02T03:09:05Z'));
  });
  afterEach(() => vi.useRealTimers());

  const row = (o: any) => Object.fromEntries(kind.tableColumns.map((c) => [c.name, c.cell(o)]));

  it('prints LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and the wide columns, Name last', () => {
    expect(kind.tableIncludesName).toBe(true);
    expect(kind.tableColumns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual(['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
    expect(kind.tableColumns.map((c) => c.name)).toEqual(['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
    expect(row(fixtures.event())).toEqual({
      'Last Seen': '4m59s',
      Type: 'Normal',
      Reason: 'Scheduled',
      Object: 'pod/web-1',
      Subobject: '',
      Source: 'orch.io/scheduler, scheduler-1',
      Message: 'Successfully assigned default/web-1 to node-1',
      'First Seen': '4m59s',
      Count: 1,
      Name: 'web-1.17a',
    });
  });

  it('takes LAST SEEN and COUNT from a series', () => {
    const o = fixtures.event();
    o.series = { count: 7, lastObservedTime: '2026-01-02T03:08:35.000000Z' };
    expect([row(o)['Last Seen'], row(o).Count]).toEqual(['30s', 7]);
  });

  it('prefers the deprecated source and timestamps of events written through the old API', () => {
    const o = fixtures.event();
    Object.assign(o, {
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2026-01-02T01:09:05Z',
      deprecatedLastTimestamp: '2026-01-02T03:08:05Z',
      deprecatedCount: 4,
    });
    expect([row(o).Source, row(o)['First Seen'], row(o)['Last Seen'], row(o).Count]).toEqual(['kubelet, node-1', '120m', '60s', 4]);
  });

  it('prints only the kind when the object has no name', () => {
    const o = fixtures.event();
    o.regarding = { kind: 'Node' };
    expect(row(o).Object).toBe('node');
  });
});

describe('Event identity and field selectors', () => {
  it('is served as events/v1 with short name ev and create-on-update', () => {
    expect([kind.group, kind.versions, kind.plural, kind.namespaced, kind.shortNames, kind.allowCreateOnUpdate]).toEqual(['events.orch.io', ['v1'], 'events', true, ['ev'], true]);
  });

  it('supports the events.k8s.io field selectors', () => {
    const o = fixtures.event();
    const got = Object.fromEntries(Object.entries(kind.fieldSelectors).map(([k, f]) => [k, f(o)]));
    expect(got).toEqual({
      'regarding.kind': 'Pod',
      'regarding.namespace': 'default',
      'regarding.name': 'web-1',
      'regarding.uid': 'u-1',
      'regarding.apiVersion': 'v1',
      'regarding.resourceVersion': '',
      'regarding.fieldPath': '',
      reason: 'Scheduled',
      reportingController: 'orch.io/scheduler',
      source: 'orch.io/scheduler',
      type: 'Normal',
    });
  });
});
