import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoveryDocuments } from '../../src/discovery/discovery.js';
import { etag, kindNames, negotiateOpenApiV2, notModified, openApiDocuments, openApiV2Document, openApiV3Documents, OPENAPI_V2_PROTOBUF } from '../../src/openapi/openapi.js';
import { encodeOpenApiV2 } from '../../src/openapi/v2-protobuf.js';
import { fixtureKinds, gadget, widget } from '../helpers/fixture-kinds.js';
import { runKubectl, versionedKubectl } from '../helpers/kubectl.js';
import { tempDir } from '../helpers/temp.js';

type J = any;

/** Every $ref in a document, with the path it was found at. */
function refs(node: J, at = '#'): [string, string][] {
  if (Array.isArray(node)) return node.flatMap((v, i) => refs(v, `${at}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) => (k === '$ref' ? [[at, v as string] as [string, string]] : refs(v, `${at}/${k}`)));
}

/** Every operation of a document: [path, method, operation]. */
const operations = (doc: J): [string, string, J][] =>
  Object.entries(doc.paths as Record<string, J>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => method !== 'parameters')
      .map(([method, op]) => [path, method, op] as [string, string, J]),
  );

const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

describe('kindNames', () => {
  it('publishes the preferred version under the schema’s refName and swaps the version segment for others', () => {
    expect(kindNames(widget, 'v1')).toEqual({ object: 'io.orch.api.example.v1.Widget', list: 'io.orch.api.example.v1.WidgetList' });
    expect(kindNames(widget, 'v1beta1')).toEqual({ object: 'io.orch.api.example.v1beta1.Widget', list: 'io.orch.api.example.v1beta1.WidgetList' });
    const { refName: _, ...schema } = gadget.schema;
    expect(kindNames({ ...gadget, schema }, 'v1')).toEqual({ object: 'io.orch.api.example.v1.Gadget', list: 'io.orch.api.example.v1.GadgetList' });
  });
});

describe('OpenAPI v3', () => {
  const docs = openApiV3Documents(fixtureKinds);
  const gv = docs.get('apis/example.orch.io/v1') as J;
  const schemas = gv.components.schemas;

  it('has a document per group-version and per discovery path', () => {
    expect([...docs.keys()].sort()).toEqual(['api', 'api/v1', 'apis', 'apis/example.orch.io', 'apis/example.orch.io/v1', 'apis/example.orch.io/v1beta1', 'version']);
    for (const doc of docs.values()) expect((doc as J).openapi).toBe('3.0.0');
  });

  it('the index links each document with the hash of its bytes', () => {
    const served = openApiDocuments(fixtureKinds);
    const index = JSON.parse(served.v3Index().body as string);
    expect(Object.keys(index.paths).sort()).toEqual([...docs.keys()].sort());
    for (const [key, { serverRelativeURL }] of Object.entries(index.paths as Record<string, { serverRelativeURL: string }>)) {
      const doc = served.v3(key);
      expect(doc).toBeDefined();
      expect(serverRelativeURL).toBe(`/openapi/v3/${key}?hash=${doc?.etag}`);
      expect(doc?.etag).toBe(etag(doc?.body as string));
      expect(doc?.contentType).toBe('application/json');
    }
    expect(served.v3('apis/nope.orch.io/v1')).toBeUndefined();
  });

  it('hashes are stable: the same registry gives the same bytes', () => {
    const a = openApiDocuments(fixtureKinds).v3Index();
    const b = openApiDocuments([...fixtureKinds]).v3Index();
    expect(b.body).toBe(a.body);
    expect(notModified(`"${a.etag}"`, b.etag)).toBe(true);
  });

  it('publishes each kind and its list with x-kubernetes-group-version-kind in the served group', () => {
    expect(schemas['io.orch.api.example.v1.Widget']['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.orch.io', kind: 'Widget', version: 'v1' }]);
    expect(schemas['io.orch.api.example.v1.WidgetList']['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.orch.io', kind: 'WidgetList', version: 'v1' }]);
    expect(schemas['io.orch.api.example.v1.GadgetList'].properties.items).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/io.orch.api.example.v1.Gadget' } });
    const beta = (docs.get('apis/example.orch.io/v1beta1') as J).components.schemas;
    expect(beta['io.orch.api.example.v1beta1.Widget']['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.orch.io', kind: 'Widget', version: 'v1beta1' }]);
    expect(beta['io.orch.api.example.v1.Gadget']).toBeUndefined();
    const core = (docs.get('api/v1') as J).components.schemas;
    expect(core['io.orch.api.core.v1.Shelf']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Shelf', version: 'v1' }]);
  });

  it('hoists nested named schemas and references properties through allOf', () => {
    const widgetSchema = schemas['io.orch.api.example.v1.Widget'];
    expect(widgetSchema.properties.spec).toEqual({ allOf: [{ $ref: '#/components/schemas/io.orch.api.example.v1.WidgetSpec' }], description: 'Desired state of a widget.' });
    expect(widgetSchema.properties.metadata.allOf).toEqual([{ $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    const spec = schemas['io.orch.api.example.v1.WidgetSpec'];
    expect(spec.properties.ports).toEqual({
      type: 'array',
      description: 'Ports the widget listens on.',
      items: { $ref: '#/components/schemas/io.orch.api.example.v1.WidgetPort' },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    });
    expect(spec.properties.selector).toEqual({ allOf: [{ $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.LabelSelector' }], description: 'Selects the gadgets this widget drives.' });
    expect(spec.properties.size).toEqual({ description: 'Size, as a number or a string like "10%".', 'x-kubernetes-int-or-string': true });
    expect(schemas['io.orch.api.example.v1.WidgetPort'].properties.protocol).toEqual({ type: 'string', description: 'TCP or UDP.', enum: ['TCP', 'UDP'], default: 'TCP' });
    expect(schemas['io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.creationTimestamp.allOf).toEqual([{ $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.Time' }]);
  });

  it('names the protocol types under io.orch.apimachinery, with their GVKs', () => {
    for (const name of ['Status', 'DeleteOptions', 'Patch', 'WatchEvent', 'ObjectMeta', 'ListMeta']) expect(schemas[`io.orch.apimachinery.pkg.apis.meta.v1.${name}`]).toBeDefined();
    expect(schemas['io.orch.apimachinery.pkg.apis.meta.v1.Status']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Status', version: 'v1' }]);
    expect(schemas['io.orch.apimachinery.pkg.apis.meta.v1.DeleteOptions']['x-kubernetes-group-version-kind']).toContainEqual({ group: 'example.orch.io', kind: 'DeleteOptions', version: 'v1beta1' });
    expect(Object.keys(schemas).filter((n) => n.includes('k8s'))).toEqual([]);
  });

  it.each([...docs.keys()])('every $ref of %s resolves within the document', (key) => {
    const doc = docs.get(key) as J;
    for (const [, ref] of refs(doc)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
  });

  it('lists every operation of a namespaced kind, the all-namespaces list, and watch paths', () => {
    const ops = operations(gv)
      .filter(([path]) => path.includes('widgets'))
      .map(([path, method, op]) => `${method.toUpperCase()} ${path.replace('/apis/example.orch.io/v1', '')} ${op['x-kubernetes-action']} ${op.operationId}`);
    expect(ops.sort()).toEqual(
      [
        'GET /namespaces/{namespace}/widgets list listExampleV1NamespacedWidget',
        'POST /namespaces/{namespace}/widgets post createExampleV1NamespacedWidget',
        'DELETE /namespaces/{namespace}/widgets deletecollection deleteExampleV1CollectionNamespacedWidget',
        'GET /namespaces/{namespace}/widgets/{name} get readExampleV1NamespacedWidget',
        'PUT /namespaces/{namespace}/widgets/{name} put replaceExampleV1NamespacedWidget',
        'PATCH /namespaces/{namespace}/widgets/{name} patch patchExampleV1NamespacedWidget',
        'DELETE /namespaces/{namespace}/widgets/{name} delete deleteExampleV1NamespacedWidget',
        'GET /widgets list listExampleV1WidgetForAllNamespaces',
        'GET /watch/widgets watchlist watchExampleV1WidgetListForAllNamespaces',
        'GET /watch/namespaces/{namespace}/widgets watchlist watchExampleV1NamespacedWidgetList',
        'GET /watch/namespaces/{namespace}/widgets/{name} watch watchExampleV1NamespacedWidget',
      ].sort(),
    );
  });

  it('serves /status of a kind that has it, and only then', () => {
    expect(Object.keys(gv.paths['/apis/example.orch.io/v1/gadgets/{name}/status']).sort()).toEqual(['get', 'parameters', 'patch', 'put']);
    expect(gv.paths['/apis/example.orch.io/v1/gadgets/{name}/status'].patch.operationId).toBe('patchExampleV1GadgetStatus');
    expect(gv.paths['/apis/example.orch.io/v1/namespaces/{namespace}/widgets/{name}/status']).toBeUndefined();
    expect((docs.get('api/v1') as J).paths['/api/v1/shelves/{name}/status'].get.operationId).toBe('readCoreV1ShelfStatus');
  });

  it('every kind operation carries its action and GVK', () => {
    for (const [path, , op] of operations(gv).filter(([path]) => path !== '/apis/example.orch.io/v1/')) {
      expect(op['x-kubernetes-action'], path).toBeTruthy();
      expect(op['x-kubernetes-group-version-kind'], path).toEqual({ group: 'example.orch.io', version: 'v1', kind: path.includes('widgets') ? 'Widget' : 'Gadget' });
    }
  });

  it('every PATCH lists fieldValidation among its own parameters and takes the four patch types', () => {
    const patches = operations(gv).filter(([, method]) => method === 'patch');
    expect(patches).toHaveLength(3);
    for (const [, , op] of patches) {
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
      expect(Object.keys(op.requestBody.content).sort()).toEqual(PATCH_TYPES);
      expect(op.requestBody.content['application/merge-patch+json'].schema).toEqual({ $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.Patch' });
    }
  });

  it('paths declare name, namespace and pretty once per path', () => {
    const item = gv.paths['/apis/example.orch.io/v1/namespaces/{namespace}/widgets/{name}'];
    expect(item.parameters.map((p: J) => [p.name, p.in, p.required ?? false])).toEqual([
      ['name', 'path', true],
      ['namespace', 'path', true],
      ['pretty', 'query', false],
    ]);
    expect(gv.paths['/apis/example.orch.io/v1/namespaces/{namespace}/widgets'].get.parameters.map((p: J) => p.name)).toContain('continue');
  });

  it('discovery documents describe their endpoints', () => {
    expect((docs.get('version') as J).paths['/version/'].get.operationId).toBe('getCodeVersion');
    expect((docs.get('apis') as J).paths['/apis/'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.APIGroupList',
    });
    expect(gv.paths['/apis/example.orch.io/v1/'].get.operationId).toBe('getExampleV1APIResources');
  });
});

describe('OpenAPI v2', () => {
  const doc = openApiV2Document(fixtureKinds) as J;

  it('is Swagger 2.0 with every kind at every version', () => {
    expect(doc.swagger).toBe('2.0');
    expect(doc.info).toEqual({ title: 'Kubernetes', version: 'v1.36.0' });
    for (const name of ['io.orch.api.example.v1.Widget', 'io.orch.api.example.v1beta1.Widget', 'io.orch.api.example.v1.Gadget', 'io.orch.api.core.v1.Shelf', 'io.orch.api.core.v1.ShelfList']) {
      expect(doc.definitions[name], name).toBeDefined();
    }
    expect(doc.definitions['io.orch.api.example.v1beta1.WidgetList']['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.orch.io', kind: 'WidgetList', version: 'v1beta1' }]);
  });

  it('references #/definitions directly, never through allOf (kube-openapi’s v2 parser ignores allOf)', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(0);
    for (const [at, ref] of all) {
      expect(ref).toMatch(/^#\/definitions\//);
      expect(doc.definitions[ref.slice('#/definitions/'.length)], `${at} → ${ref}`).toBeDefined();
    }
    expect(JSON.stringify(doc)).not.toContain('allOf');
    expect(doc.definitions['io.orch.api.example.v1.Widget'].properties.spec).toEqual({ $ref: '#/definitions/io.orch.api.example.v1.WidgetSpec', description: 'Desired state of a widget.' });
  });

  it('keeps list types and patch strategies', () => {
    const spec = doc.definitions['io.orch.api.example.v1.WidgetSpec'];
    expect(spec.properties.ports).toMatchObject({
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    expect(doc.definitions['io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.finalizers).toMatchObject({ 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-list-type': 'set' });
  });

  it('every PATCH names its GVK and lists fieldValidation (what kubectl 1.27 checks before create)', () => {
    const patches = operations(doc).filter(([, method]) => method === 'patch');
    expect(patches).toHaveLength(6);
    for (const [path, , op] of patches) {
      expect(op['x-kubernetes-group-version-kind'], path).toMatchObject({ version: expect.any(String), kind: expect.any(String) });
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query', type: 'string' }));
      expect(op.parameters).toContainEqual({ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.Patch' } });
      expect([...op.consumes].sort()).toEqual(PATCH_TYPES);
    }
  });
});

describe('negotiateOpenApiV2', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    ['kubectl 1.27/1.28', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'protobuf'],
    ['the valid protobuf name', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'protobuf'],
    ['JSON', 'application/json', 'json'],
    ['JSON preferred by q', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json', 'json'],
    ['wildcard', '*/*', 'json'],
    ['no Accept', undefined, 'json'],
    ['nothing acceptable', 'text/html', undefined],
  ];
  it.each(cases)('%s', (_name, accept, want) => {
    expect(negotiateOpenApiV2(accept)).toBe(want);
  });

  it('answers protobuf with a valid MIME type and the JSON document’s ETag', async () => {
    const served = openApiDocuments(fixtureKinds);
    const pb = await served.v2('application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
    const json = await served.v2('application/json');
    expect(pb?.contentType).toBe(OPENAPI_V2_PROTOBUF);
    expect(OPENAPI_V2_PROTOBUF).not.toContain('@');
    expect(pb?.body).toBeInstanceOf(Uint8Array);
    expect(json?.contentType).toBe('application/json');
    expect(pb?.etag).toBe(json?.etag);
    expect(await served.v2('text/html')).toBeUndefined();
  });
});

/** A protobuf reader for the test: a message as field number → values (varints as numbers, the rest as bytes). */
function read(bytes: Uint8Array): Map<number, (number | Uint8Array)[]> {
  const fields = new Map<number, (number | Uint8Array)[]>();
  let at = 0;
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[at++];
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    const [field, wire] = [Math.floor(tag / 8), tag % 8];
    let value: number | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const len = varint();
      value = bytes.subarray(at, at + len);
      at += len;
    } else throw new Error(`unexpected wire type ${wire}`);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}
const text = (b: number | Uint8Array | undefined) => new TextDecoder().decode(b as Uint8Array);
const all = (m: Map<number, (number | Uint8Array)[]>, field: number) => (m.get(field) ?? []) as Uint8Array[];
const one = (m: Map<number, (number | Uint8Array)[]>, field: number) => {
  const values = all(m, field);
  expect(values, `field ${field}`).toHaveLength(1);
  return values[0];
};
const strings = (m: Map<number, (number | Uint8Array)[]>, field: number) => all(m, field).map(text);
/** Repeated NamedX messages as name → value bytes (name = 1, value = 2). */
const named = (list: Uint8Array[]) => new Map(list.map((b) => read(b)).map((m) => [text(one(m, 1)), one(m, 2)]));
/** A vendor extension's value, parsed from its Any.yaml (field 2) as kubectl's YAML parser would. */
const extension = (list: Uint8Array[], name: string) => {
  const value = named(list).get(name);
  return value && JSON.parse(text(one(read(value), 2)));
};

const v2Protobuf = await openApiDocuments(fixtureKinds).v2('application/com.github.proto-openapi.spec.v2@v1.0+protobuf');

describe('OpenAPI v2 protobuf (gnostic openapi.v2.Document)', () => {
  const json = openApiV2Document(fixtureKinds) as J;
  const doc = read(v2Protobuf?.body as Uint8Array);
  const definitions = named(all(read(one(doc, 9)), 1));
  const schema = (name: string) => read(definitions.get(name) as Uint8Array);
  const properties = (s: Map<number, (number | Uint8Array)[]>) => named(all(read(one(s, 25)), 1));

  it('has swagger, info and every definition in order', () => {
    expect(text(one(doc, 1))).toBe('2.0');
    const info = read(one(doc, 2));
    expect([text(one(info, 1)), text(one(info, 2))]).toEqual(['Kubernetes', 'v1.36.0']);
    expect([...definitions.keys()]).toEqual(Object.keys(json.definitions));
  });

  it('encodes a kind: type, properties, references and its GVK as YAML', () => {
    const w = schema('io.orch.api.example.v1.Widget');
    expect(strings(read(one(w, 22)), 1)).toEqual(['object']);
    expect([...properties(w).keys()]).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    const spec = read(properties(w).get('spec') as Uint8Array);
    expect(text(one(spec, 1))).toBe('#/definitions/io.orch.api.example.v1.WidgetSpec');
    expect(spec.get(22)).toBeUndefined();
    expect(extension(all(w, 31), 'x-kubernetes-group-version-kind')).toEqual([{ group: 'example.orch.io', kind: 'Widget', version: 'v1' }]);
  });

  it('encodes arrays, maps, enums, defaults and list extensions', () => {
    const spec = properties(schema('io.orch.api.example.v1.WidgetSpec'));
    const ports = read(spec.get('ports') as Uint8Array);
    expect(text(one(read(one(read(one(ports, 23)), 1)), 1))).toBe('#/definitions/io.orch.api.example.v1.WidgetPort');
    expect(extension(all(ports, 31), 'x-kubernetes-patch-merge-key')).toBe('name');
    expect(extension(all(ports, 31), 'x-kubernetes-list-map-keys')).toEqual(['name']);
    const labels = read(spec.get('labels') as Uint8Array);
    expect(strings(read(one(read(one(read(one(labels, 21)), 1)), 22)), 1)).toEqual(['string']);
    const protocol = read(properties(schema('io.orch.api.example.v1.WidgetPort')).get('protocol') as Uint8Array);
    expect(all(protocol, 20).map((any) => JSON.parse(text(one(read(any), 2))))).toEqual(['TCP', 'UDP']);
    expect(JSON.parse(text(one(read(one(protocol, 5)), 2)))).toBe('TCP');
    expect(strings(schema('io.orch.api.example.v1.WidgetPort'), 19)).toEqual(['name', 'port']);
  });

  it('encodes the PATCH operation as cli-runtime’s QueryParamVerifier reads it', () => {
    const paths = named(all(read(one(doc, 8)), 2));
    expect([...paths.keys()]).toEqual(Object.keys(json.paths));
    const item = read(paths.get('/apis/example.orch.io/v1/namespaces/{namespace}/widgets/{name}') as Uint8Array);
    const patch = read(one(item, 8));
    expect(text(one(patch, 5))).toBe('patchExampleV1NamespacedWidget');
    expect(strings(patch, 7).sort()).toEqual(PATCH_TYPES);
    expect(extension(all(patch, 13), 'x-kubernetes-group-version-kind')).toEqual({ group: 'example.orch.io', kind: 'Widget', version: 'v1' });
    expect(extension(all(patch, 13), 'x-kubernetes-action')).toBe('patch');
    // ParametersItem.parameter(1) → Parameter: body_parameter(1) | non_body_parameter(2) → query_parameter_sub_schema(3).
    const params = all(patch, 8).map((p) => read(one(read(p), 1)));
    const body = read(one(params[0], 1));
    expect([text(one(body, 2)), text(one(body, 3)), one(body, 4)]).toEqual(['body', 'body', 1]);
    expect(text(one(read(one(body, 5)), 1))).toBe('#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.Patch');
    const query = params.slice(1).map((p) => read(one(read(one(p, 2)), 3)));
    expect(query.map((q) => [text(one(q, 2)), text(one(q, 4)), text(one(q, 6))])).toContainEqual(['query', 'fieldValidation', 'string']);
    // Path-level parameters: path_parameter_sub_schema(4), required.
    const name = read(one(read(one(read(one(read(all(item, 9)[0]), 1)), 2)), 4));
    expect([one(name, 1), text(one(name, 2)), text(one(name, 4)), text(one(name, 5))]).toEqual([1, 'path', 'name', 'string']);
    // Responses: NamedResponseValue → ResponseValue.response(1) → Response.schema(2) → SchemaItem.schema(1).
    const ok = read(one(read(named(all(read(one(patch, 9)), 1)).get('200') as Uint8Array), 1));
    expect(text(one(ok, 1))).toBe('OK');
    expect(text(one(read(one(read(one(ok, 2)), 1)), 1))).toBe('#/definitions/io.orch.api.example.v1.Widget');
  });

  it('writes an empty properties message when properties is empty, and none when absent', () => {
    const bytes = encodeOpenApiV2({ swagger: '2.0', definitions: { A: { type: 'object', properties: {} }, B: { type: 'object' } } });
    const defs = named(all(read(one(read(bytes), 9)), 1));
    expect(read(defs.get('A') as Uint8Array).get(25)).toEqual([new Uint8Array()]);
    expect(read(defs.get('B') as Uint8Array).get(25)).toBeUndefined();
  });

  it('encodes field numbers above 15 with two-byte tags', () => {
    // vendor_extension is field 31 of Schema: tag (31 << 3 | 2) = 250 → varint 0xfa 0x01.
    const bytes = encodeOpenApiV2({ swagger: '2.0', definitions: { A: { 'x-kubernetes-map-type': 'atomic' } } });
    expect(Buffer.from(bytes).includes(Buffer.from([0xfa, 0x01]))).toBe(true);
  });
});

/**
 * Real kubectl against a minimal server serving these documents for the fixture kinds: 1.27 must
 * read the protobuf v2 document (it fails without it) and 1.33 the v3 documents.
 */
describe('kubectl explain against the documents', () => {
  let server: Server;
  let url: string;
  let cacheRoot: string;
  const seen: string[] = [];

  const discovery = discoveryDocuments(fixtureKinds);
  const openapi = openApiDocuments(fixtureKinds);

  beforeAll(async () => {
    cacheRoot = tempDir('orchd-kubectl-');
    const serveDocs = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const { pathname } = new URL(req.url ?? '/', 'http://localhost');
      const path = pathname.replace(/\/$/, '');
      const segs = path.split('/').slice(1);
      let doc;
      if (path === '/version') doc = discovery.version;
      else if (path === '/api' || path === '/apis') doc = discovery.root(path === '/api' ? 'api' : 'apis', req.headers.accept);
      else if (path === '/openapi/v2') doc = await openapi.v2(req.headers.accept);
      else if (path === '/openapi/v3') doc = openapi.v3Index();
      else if (path.startsWith('/openapi/v3/')) doc = openapi.v3(path.slice('/openapi/v3/'.length));
      else if (segs[0] === 'apis' && segs.length === 2) doc = discovery.group(segs[1]);
      else if (segs[0] === 'apis' && segs.length === 3) doc = discovery.groupVersion(segs[1], segs[2]);
      else if (segs[0] === 'api' && segs.length === 2) doc = discovery.groupVersion('', segs[1]);
      seen.push(`${req.method} ${pathname} ${req.headers.accept ?? ''} → ${doc ? doc.contentType : 404}`);
      if (doc && notModified(req.headers['if-none-match'], doc.etag)) {
        res.writeHead(304, { ETag: `"${doc.etag}"` }).end();
      } else if (doc) {
        res.writeHead(200, { 'Content-Type': doc.contentType, ETag: `"${doc.etag}"` }).end(doc.body);
      } else if (segs[0] === 'api' || segs[0] === 'apis') {
        const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotFound', message: 'the server could not find the requested resource', code: 404 };
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify(status));
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found');
      }
    };
    server = createServer((req, res) => void serveDocs(req, res).catch((err: Error) => res.destroy(err)));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((ok) => server?.close(ok));
  });

  /** Runs a kubectl binary with its own cache; it is killed (by its PID) after the timeout. */
  const kubectl = (version: string, args: string[], cache = version) =>
    runKubectl(['--server', url, '--cache-dir', join(cacheRoot, cache), '--request-timeout=20s', ...args], {
      binary: versionedKubectl(version),
      env: { KUBECONFIG: '/dev/null', HOME: cacheRoot },
      timeoutMs: 50_000,
    });

  it('kubectl 1.27 fetches the protobuf v2 document and explains from it', async () => {
    const r = await kubectl('1.27', ['explain', 'widgets.spec', '--output=plaintext-openapiv2']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/KIND:\s+Widget/);
    expect(r.stdout).toMatch(/ports\s+<\[\]Object>/);
    for (const field of ['color', 'labels', 'payload', 'selector', 'size', 'tags', 'Ports the widget listens on.']) expect(r.stdout).toContain(field);
    expect(seen).toContainEqual(`GET /openapi/v2 application/com.github.proto-openapi.spec.v2@v1.0+protobuf → ${OPENAPI_V2_PROTOBUF}`);
  });

  it('kubectl 1.27 explains from v3 by default (after reading v2)', async () => {
    const r = await kubectl('1.27', ['explain', 'gadgets.status.conditions']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/GROUP:\s+example\.orch\.io/);
    expect(r.stdout).toMatch(/lastTransitionTime\s+<string>/);
  });

  it('kubectl 1.33 explains from v3 without fetching v2', async () => {
    const before = seen.length;
    const r = await kubectl('1.33', ['explain', 'widgets.spec']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/FIELD: spec <WidgetSpec>/);
    expect(r.stdout).toMatch(/ports\s+<\[\]WidgetPort>/);
    expect(r.stdout).toMatch(/enum: red, green, blue/);
    const core = await kubectl('1.33', ['explain', 'shelves']);
    expect(core.code, core.stderr).toBe(0);
    expect(core.stdout).toMatch(/KIND:\s+Shelf/);
    expect(seen.slice(before).filter((l) => l.includes('/openapi/v2'))).toEqual([]);
    expect(seen.slice(before)).toContainEqual(
      expect.stringMatching(/^GET \/apis application\/json;g=apidiscovery\.k8s\.io;v=v2;.* → application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList$/),
    );
  });

  it.each(['1.27', '1.33'])('kubectl %s finds fieldValidation support and leaves validation to the server', async (version) => {
    const file = join(cacheRoot, `widget-${version}.yaml`);
    await writeFile(file, 'apiVersion: example.orch.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {color: red, unknownField: 1}\n');
    const before = seen.length;
    const r = await kubectl(version, ['create', '-f', file], `create-${version}`);
    // Client-side validation would have rejected unknownField without asking the server.
    expect(r.stderr).toContain('Error from server (NotFound)');
    expect(seen.slice(before)).toContainEqual(expect.stringMatching(/^POST \/apis\/example\.orch\.io\/v1\/namespaces\/default\/widgets /));
  });
});
