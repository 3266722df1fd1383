/**
 * Kinds for the discovery, OpenAPI and Table suites, independent of the real registry: a namespaced
 * kind in a named group served at two versions, a cluster-scoped kind with a status subresource in
 * the same group (one version only), and a core kind.
 */
import { labelSelectorSchema, objectMetaSchema, timeSchema } from '../../src/resources/meta-schema.js';
import { arrayOf, atomicList, int, mergeList, obj, str, strMap, type Schema } from '../../src/api/schema.js';
import type { KindStrategy } from '../../src/api/strategy.js';

const WIDGETS = 'io.orch.api.example.v1';

const portSchema = obj(
  `${WIDGETS}.WidgetPort`,
  { name: str('Name of the port.'), port: int('Port number.'), protocol: str('TCP or UDP.', { enum: ['TCP', 'UDP'], default: 'TCP' }) },
  { required: ['name', 'port'], description: 'A port a widget listens on.' },
);

const widgetSpec = obj(
  `${WIDGETS}.WidgetSpec`,
  {
    color: str('Color of the widget.', { enum: ['red', 'green', 'blue'] }),
    ports: mergeList(portSchema, 'name', 'Ports the widget listens on.'),
    selector: { ...labelSelectorSchema, description: 'Selects the gadgets this widget drives.' },
    size: { 'x-kubernetes-int-or-string': true, description: 'Size, as a number or a string like "10%".' },
    labels: strMap('Extra labels.'),
    tags: atomicList(str(), 'Free-form tags.'),
    payload: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'Anything.' },
  },
  { description: 'Desired state of a widget.' },
);

const kindBase = (refName: string, description: string, properties: Record<string, Schema>): Schema =>
  obj(refName, { apiVersion: str('API version.'), kind: str('Kind.'), metadata: objectMetaSchema, ...properties }, { description });

const noHooks = { applyDefaults() {}, validate: () => [] };

export const widget: KindStrategy = {
  group: 'example.orch.io',
  versions: ['v1', 'v1beta1'],
  kind: 'Widget',
  listKind: 'WidgetList',
  plural: 'widgets',
  singular: 'widget',
  shortNames: ['wd'],
  categories: ['all'],
  namespaced: true,
  hasStatus: false,
  schema: kindBase(`${WIDGETS}.Widget`, 'A widget.', { spec: widgetSpec }),
  tableColumns: [
    { name: 'Color', type: 'string', description: 'Color of the widget.', priority: 0, cell: (o) => (o.spec as { color?: string } | undefined)?.color ?? null },
    { name: 'Ports', type: 'integer', description: 'Number of ports.', priority: 1, cell: (o) => ((o.spec as { ports?: unknown[] } | undefined)?.ports ?? []).length },
  ],
  ...noHooks,
};

const conditionList = (description: string): Schema => ({
  ...arrayOf(obj(`${WIDGETS}.GadgetCondition`, { type: str('Condition type.'), lastTransitionTime: timeSchema }, { description: 'A condition of a gadget.' })),
  description,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

export const gadget: KindStrategy = {
  group: 'example.orch.io',
  versions: ['v1'],
  kind: 'Gadget',
  listKind: 'GadgetList',
  plural: 'gadgets',
  singular: 'gadget',
  namespaced: false,
  hasStatus: true,
  schema: kindBase(`${WIDGETS}.Gadget`, 'A gadget.', {
    spec: obj(undefined, { replicas: int('How many.') }, { description: 'Desired state.' }),
    status: obj(undefined, { conditions: conditionList('Observed conditions.') }, { description: 'Observed state.' }),
  }),
  tableColumns: [],
  ...noHooks,
};

export const shelf: KindStrategy = {
  group: '',
  versions: ['v1'],
  kind: 'Shelf',
  listKind: 'ShelfList',
  plural: 'shelves',
  singular: 'shelf',
  shortNames: ['sh'],
  namespaced: false,
  hasStatus: true,
  schema: kindBase('io.orch.api.core.v1.Shelf', 'A shelf.', { spec: obj(undefined, { finalizers: atomicList(str(), 'Finalizers.') }, { description: 'Spec.' }) }),
  tableColumns: [{ name: 'Status', type: 'string', description: 'Phase.', priority: 0, cell: (o) => (o.status as { phase?: string } | undefined)?.phase ?? '' }],
  ...noHooks,
};

export const fixtureKinds: KindStrategy[] = [widget, gadget, shelf];
