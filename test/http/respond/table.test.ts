import { describe, expect, it } from 'vitest';
import type { KindStrategy } from '../../../src/api/strategy.js';
import type { KubeObject } from '../../../src/api/types.js';
import { tableFor, wantsTable } from '../../../src/http/respond/table.js';
import { gadget, widget } from '../../helpers/fixture-kinds.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('wantsTable', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    ['kubectl get', TABLE, 'v1'],
    ['only v1beta1', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', 'v1beta1'],
    ['q prefers v1beta1', 'application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5,application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'v1beta1'],
    ['parameters in any order', 'application/json;g=meta.k8s.io;v=v1;as=Table', 'v1'],
    ['kubectl get -o yaml', 'application/json', undefined],
    ['plain JSON before a Table', `application/json,${TABLE}`, undefined],
    ['wildcard', '*/*', undefined],
    ['no Accept', undefined, undefined],
    ['an unsupported conversion is passed over', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json', undefined],
    ['an unknown Table version is passed over', 'application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    ['another group is not a Table', 'application/json;as=Table;v=v1;g=meta.orch.io', undefined],
    ['a Table in a format orchd does not serve', 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json', undefined],
  ];
  it.each(cases)('%s', (_name, accept, want) => {
    expect(wantsTable(accept)).toBe(want);
  });
});

const NOW = Date.parse('2025-06-01T12:00:00Z');
const make = (name: string, ageMs: number, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'example.orch.io/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'default', resourceVersion: '7', uid: `uid-${name}`, creationTimestamp: new Date(NOW - ageMs).toISOString() },
  ...extra,
});

describe('tableFor', () => {
  it('renders NAME, the kind’s columns, AGE, then -o wide columns', () => {
    const table = tableFor(widget, [make('a', 5_000, { spec: { color: 'red', ports: [{}, {}] } }), make('b', 200_000)], {
      now: NOW,
      listMeta: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 },
    });
    expect(table.kind).toBe('Table');
    expect(table.apiVersion).toBe('meta.k8s.io/v1');
    expect(table.metadata).toEqual({ resourceVersion: '42', continue: 'tok', remainingItemCount: 3 });
    expect(table.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Color', 'string', '', 0],
      ['Age', 'string', '', 0],
      ['Ports', 'integer', '', 1],
    ]);
    expect(table.rows.map((r) => r.cells)).toEqual([
      ['a', 'red', '5s', 2],
      ['b', null, '3m20s', 0],
    ]);
  });

  it('rows carry PartialObjectMetadata by default', () => {
    const obj = make('a', 0);
    expect(tableFor(widget, obj, { now: NOW }).rows[0].object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata });
  });

  const includes: [string, 'None' | 'Metadata' | 'Object', (obj: KubeObject) => unknown][] = [
    ['None: no object', 'None', () => undefined],
    ['Metadata: the metadata', 'Metadata', (obj) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata })],
    ['Object: the whole object', 'Object', (obj) => obj],
  ];
  it.each(includes)('includeObject=%s', (_name, includeObject, want) => {
    const obj = make('a', 0);
    const row = tableFor(widget, [obj], { includeObject, now: NOW }).rows[0];
    expect(row.object).toEqual(want(obj));
    expect('object' in row).toBe(includeObject !== 'None');
  });

  it('v1beta1 tables and their rows say meta.k8s.io/v1beta1', () => {
    const table = tableFor(widget, [make('a', 0)], { version: 'v1beta1', now: NOW });
    expect(table.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect((table.rows[0].object as { apiVersion: string }).apiVersion).toBe('meta.k8s.io/v1beta1');
  });

  it('a single object’s table carries its resourceVersion', () => {
    expect(tableFor(widget, make('a', 0), { now: NOW }).metadata).toEqual({ resourceVersion: '7' });
    expect(tableFor(widget, [make('a', 0)], { now: NOW }).metadata).toEqual({ resourceVersion: '7' });
    expect(tableFor(widget, [make('a', 0), make('b', 0)], { now: NOW }).metadata).toEqual({});
    expect(tableFor(widget, [], { now: NOW, listMeta: { resourceVersion: '9' } })).toMatchObject({ metadata: { resourceVersion: '9' }, rows: [] });
  });

  it('a kind without columns gets NAME and AGE', () => {
    expect(tableFor(gadget, [], {}).columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Age']);
  });

  it('a kind that prints its own Name and Age keeps them where it puts them', () => {
    const eventLike: KindStrategy = {
      ...widget,
      tableColumns: [
        { name: 'Last Seen', type: 'string', description: '', priority: 0, cell: () => '1m' },
        { name: 'Age', type: 'string', description: '', priority: 0, cell: () => 'own' },
        { name: 'Name', type: 'string', format: 'name', description: '', priority: 1, cell: (o) => o.metadata.name ?? '' },
      ],
    };
    const table = tableFor(eventLike, [make('a', 0)], { now: NOW });
    expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0],
      ['Age', 0],
      ['Name', 1],
    ]);
    expect(table.rows[0].cells).toEqual(['1m', 'own', 'a']);
  });

  it('AGE is <unknown> without a creationTimestamp', () => {
    const obj: KubeObject = { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'x' } };
    expect(tableFor(gadget, obj, { now: NOW }).rows[0].cells).toEqual(['x', '<unknown>']);
  });
});

// apimachinery's duration_test.go (HumanDuration boundaries), in milliseconds.
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;
const ages: [number, string][] = [
  [-2 * S, '<invalid>'],
  [-2 * S + 1, '0s'],
  [0, '0s'],
  [S - 1, '0s'],
  [2 * M - 1, '119s'],
  [2 * M, '2m'],
  [2 * M + S, '2m1s'],
  [10 * M - 1, '9m59s'],
  [10 * M, '10m'],
  [10 * M + S, '10m'],
  [3 * H - 1, '179m'],
  [3 * H, '3h'],
  [3 * H + M, '3h1m'],
  [8 * H - 1, '7h59m'],
  [8 * H, '8h'],
  [8 * H + 59 * M, '8h'],
  [2 * D - 1, '47h'],
  [2 * D, '2d'],
  [2 * D + H, '2d1h'],
  [8 * D - 1, '7d23h'],
  [8 * D, '8d'],
  [8 * D + 23 * H, '8d'],
  [2 * Y - 1, '729d'],
  [2 * Y, '2y'],
  [2 * Y + 23 * H + 59 * M, '2y'],
  [2 * Y + D - 1, '2y'],
  [2 * Y + D, '2y1d'],
  [3 * Y, '3y'],
  [7 * Y, '7y'],
  [8 * Y - 1, '7y364d'],
  [8 * Y, '8y'],
  [8 * Y + 364 * D, '8y'],
  [9 * Y, '9y'],
];

describe('AGE is duration.HumanDuration of now - creationTimestamp', () => {
  it.each(ages)('%d ms → %s', (ms, want) => {
    const created = new Date(NOW - ms).toISOString();
    const obj: KubeObject = { apiVersion: 'v1', kind: 'Gadget', metadata: { name: 'g', creationTimestamp: created } };
    expect(tableFor(gadget, obj, { now: NOW }).rows[0].cells[1]).toBe(want);
  });
});
