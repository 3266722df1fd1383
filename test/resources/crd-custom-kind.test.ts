/**
 * The kind a CRD defines (resources/crd/custom-kind.ts), as the registry runs it on a write:
 * pruning, defaults, the schema's value validations in kube-openapi's words, CEL rules with
 * oldSelf paired through objects and map lists, and what kubectl reads of it (columns, field
 * selectors through selectableFields, JSONPath).
 */
import { describe, expect, it } from 'vitest';
import { customKindOf } from '../../src/resources/crd/custom-kind.js';
import { compileJsonPath, evaluateJsonPath } from '../../src/resources/crd/json-path.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { servedAt } from '../../src/api/strategy.js';

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      'x-kubernetes-validations': [
        { rule: 'self.replicas <= self.maxReplicas', messageExpression: "'replicas ' + string(self.replicas) + ' above ' + string(self.maxReplicas)" },
        { rule: 'self.name == oldSelf.name', message: 'name is immutable', reason: 'FieldValueForbidden', fieldPath: '.name' },
      ],
      properties: {
        name: { type: 'string', maxLength: 10, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', minimum: 0, default: 1 },
        maxReplicas: { type: 'integer', default: 5 },
        colour: { type: 'string', enum: ['red', 'green'] },
        email: { type: 'string', format: 'email' },
        nick: { type: 'string', nullable: true },
        size: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', maxItems: 2, 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer', minimum: 1 } },
            'x-kubernetes-validations': [{ rule: '!has(oldSelf.port) || self.port >= oldSelf.port', message: 'ports only grow' }],
          },
        },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        inner: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string' } } },
  },
};

const crd = {
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'things', kind: 'Thing' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        selectableFields: [{ jsonPath: '.spec.colour' }],
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'First', type: 'string', jsonPath: '.spec.ports[0].name' },
          { name: 'Http', type: 'integer', jsonPath: '.spec.ports[?(@.name=="http")].port' },
        ],
        schema: { openAPIV3Schema: schema },
      },
      { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      { name: 'v0', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
    ],
  },
};

const kind = servedAt(customKindOf(crd as any), 'v1');
const thing = (spec: Record<string, unknown>, more: Record<string, unknown> = {}): any => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 't', namespace: 'default' },
  spec,
  ...more,
});
const messages = (errs: ReturnType<typeof kind.validate>) => errs.map(formatFieldError);

describe('the kind a CRD defines', () => {
  it('is served at its served versions (storage first), each with its own schema', () => {
    const base = customKindOf(crd as any);
    expect(base).toMatchObject({ group: 'example.com', kind: 'Thing', listKind: 'ThingList', plural: 'things', singular: 'thing', namespaced: true, versions: ['v1', 'v2'] });
    expect(servedAt(base, 'v1').hasStatus).toBe(true);
    expect(servedAt(base, 'v2').hasStatus).toBe(false);
    expect(Object.keys(servedAt(base, 'v1').schema.properties!)).toEqual(['spec', 'status', 'apiVersion', 'kind', 'metadata']);
  });

  it('prunes what the schema does not declare, keeping what preserve-unknown-fields and embedded resources keep', () => {
    const o = thing({
      name: 'a',
      bogus: 1,
      ports: [{ name: 'x', junk: true }],
      extra: { free: 1, known: { a: 'x', b: 'pruned' } },
      inner: { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, any: 2 },
    });
    o.metadata.surprise = true;
    const pruned = kind.prune!(o);
    expect(pruned).toEqual(['metadata.surprise', 'spec.bogus', 'spec.extra.known.b', 'spec.ports[0].junk']);
    expect(o.spec).toEqual({ name: 'a', ports: [{ name: 'x' }], extra: { free: 1, known: { a: 'x' } }, inner: { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, any: 2 } });
  });

  it('fills defaults, in place of a null only where null is not allowed', () => {
    const o = thing({ name: 'a', replicas: null, nick: null });
    kind.applyDefaults(o);
    expect(o.spec).toEqual({ name: 'a', replicas: 1, maxReplicas: 5, nick: null });
  });

  it('validates values as kube-openapi words it, every error at once', () => {
    const o = thing({ name: 'TooLongName', replicas: -1, colour: 'blue', email: 'nope', size: 1.5, tags: ['a', 'a', 'b'], ports: [{ name: 'p' }, { name: 'p', port: 0 }], labels: { a: 1 } });
    expect(messages(kind.validate(o))).toEqual([
      'spec.name: Too long: may not be more than 10 bytes',
      'spec.name: Invalid value: "TooLongName": spec.name in body should match \'^[a-z]+$\'',
      'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
      'spec.colour: Unsupported value: "blue": supported values: "red", "green"',
      'spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"',
      'spec.size: Invalid value: "number": spec.size in body must be of type integer,string: "number"',
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.tags[1]: Duplicate value: "a"',
      'spec.ports[1].port: Invalid value: 0: spec.ports[1].port in body should be greater than or equal to 1',
      'spec.ports[1]: Duplicate value: {"name":"p"}',
      'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    expect(messages(kind.validate(thing({})))[0]).toBe('spec.name: Required value');
  });

  it('runs CEL rules: messageExpression, and transition rules only on updates, paired by map-list keys', () => {
    const o = thing({ name: 'a', replicas: 9, maxReplicas: 5 });
    expect(messages(kind.validate(o))).toEqual(['spec: Invalid value: replicas 9 above 5']);
    const old = thing({
      name: 'a',
      replicas: 1,
      maxReplicas: 5,
      ports: [
        { name: 'http', port: 80 },
        { name: 'ssh', port: 22 },
      ],
    });
    const next = thing({
      name: 'b',
      replicas: 1,
      maxReplicas: 5,
      ports: [
        { name: 'ssh', port: 2222 },
        { name: 'http', port: 8 },
        { name: 'new', port: 1 },
      ],
    });
    expect(messages(kind.validateUpdate!(next, old))).toEqual(['spec.name: Forbidden: name is immutable', 'spec.ports[1]: Invalid value: ports only grow']);
    // The same object as a create: no old values, so the transition rules do not run.
    expect(kind.validate(next)).toEqual([]);
  });

  it('validates a /status write by status only (and the rules)', () => {
    const old = thing({ name: 'a', replicas: 1, maxReplicas: 5 });
    const next = { ...old, status: { phase: 3 } };
    expect(messages(kind.validateStatusUpdate!(next, old))).toEqual([
      'status.phase: Invalid value: "integer": status.phase in body must be of type string: "integer"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('prints its columns from JSON paths, and selects by its selectable fields', () => {
    const o = thing({
      name: 'a',
      replicas: 3,
      colour: 'red',
      ports: [
        { name: 'ssh', port: 22 },
        { name: 'http', port: 80 },
      ],
    });
    expect(kind.tableColumns.map((c) => [c.name, c.cell(o)])).toEqual([
      ['Name', 't'],
      ['Replicas', 3],
      ['First', 'ssh'],
      ['Http', 80],
    ]);
    expect(kind.fieldSelectors?.['spec.colour']?.(o)).toBe('red');
    expect(kind.fieldSelectors?.['spec.colour']?.(thing({ name: 'a' }))).toBe('');
  });
});

describe('JSONPath as kubectl writes it', () => {
  const obj = {
    spec: {
      list: [
        { n: 'a', v: 1 },
        { n: 'b', v: 2 },
        { n: 'c', v: 3 },
      ],
      'dotted.key': 'x',
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
  it.each<[string, unknown[]]>([
    ['.spec.list[0].n', ['a']],
    ['.spec.list[-1].n', ['c']],
    ['.spec.list[*].n', ['a', 'b', 'c']],
    ['.spec.list[1:].v', [2, 3]],
    ['{.spec.list[?(@.v > 1)].n}', ['b', 'c']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ["['spec']['dotted.key']", ['x']],
    ['..n', ['a', 'b', 'c']],
    ['.spec.missing', []],
  ])('%s', (path, expected) => {
    expect(evaluateJsonPath(compileJsonPath(path), obj)).toEqual(expected);
  });
});

describe('refusals of a schema, each with its field path', () => {
  const kindOf = (properties: Record<string, unknown>) =>
    servedAt(
      customKindOf({
        ...crd,
        spec: { ...crd.spec, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } } } }] },
      } as any),
      'v1',
    );
  const refusals = (k: ReturnType<typeof kindOf>, spec: Record<string, unknown>) => messages(k.validate(thing(spec)));

  it('minItems, minLength; null only where nullable', () => {
    const k = kindOf({ hosts: { type: 'array', minItems: 1, items: { type: 'string', minLength: 2 } }, nick: { type: 'string', nullable: true }, colour: { type: 'string' } });
    expect(refusals(k, { hosts: [], nick: null, colour: null })).toEqual([
      'spec.hosts: Invalid value: 0: spec.hosts in body should have at least 1 items',
      'spec.colour: Invalid value: "null": spec.colour in body must be of type string: "null"',
    ]);
    expect(refusals(k, { hosts: ['a', 'bc'] })).toEqual(['spec.hosts[0]: Invalid value: "a": spec.hosts[0] in body should be at least 2 chars long']);
    expect(refusals(k, { hosts: ['ab'], nick: null, colour: 'red' })).toEqual([]);
  });

  it("an embedded resource's metadata is ObjectMeta: names as path segments, namespace, label and annotation keys", () => {
    const k = kindOf({ template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } });
    const meta = { name: 'a/b', generateName: 'x%', namespace: 'Bad_NS', labels: { 'bad key!': 'v', ok: 'bad value!' }, annotations: { 'bad key!': 'x' } };
    const got = refusals(k, { template: { apiVersion: 'v1', kind: 'Pod', metadata: meta } });
    expect(got.map((m) => m.slice(0, m.indexOf(': ')))).toEqual([
      'spec.template.metadata.generateName',
      'spec.template.metadata.name',
      'spec.template.metadata.namespace',
      'spec.template.metadata.labels',
      'spec.template.metadata.labels',
      'spec.template.metadata.annotations',
    ]);
    expect(got[0]).toBe(`spec.template.metadata.generateName: Invalid value: "x%": may not contain '%'`);
    expect(got[1]).toBe(`spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`);
    expect(got[3]).toMatch(/^spec\.template\.metadata\.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters/);
    expect(got[4]).toMatch(/^spec\.template\.metadata\.labels: Invalid value: "bad value!": a valid label must be/);
    expect(refusals(k, { template: { apiVersion: 'v1', kind: 'Pod', metadata: 'x' } })).toEqual(['spec.template.metadata: Invalid value: "x": must be an object']);
    // No name is needed (a template's name is often left to the controller), and a good one passes.
    expect(refusals(k, { template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { app: 'web' } } } })).toEqual([]);
    expect(refusals(k, { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default', annotations: { 'example.com/a': 'b' } } } })).toEqual([]);
  });

  it('at run time: a rule over its per-call cost limit, and the rules of one object over their shared budget', () => {
    // Each match of a long string costs about 250k (kube's regex cost: ceil(100001 × 0.1) ×
    // ceil(83 × 0.25)): five in one rule are over its 1M per-call limit; each in a rule of its own is
    // within it, and 60 such rules overdraw the object's 10M budget. (Cost, not time: a regex match is fast.)
    const pattern = `^x*${'y?'.repeat(40)}$`;
    const fiveMatches = `[1, 2, 3, 4, 5].all(i, self.s.matches('${pattern}'))`;
    const perCall = kindOf({ big: { type: 'object', properties: { s: { type: 'string', maxLength: 100_000 } }, 'x-kubernetes-validations': [{ rule: fiveMatches }] } });
    expect(refusals(perCall, { big: { s: 'x'.repeat(100_000) } })).toEqual([
      `spec.big: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${fiveMatches}`,
    ]);
    expect(refusals(perCall, { big: { s: 'x'.repeat(1000) } })).toEqual([]);
    const rules = Array.from({ length: 60 }, (_, i) => ({ rule: `self.s.matches('${pattern}') || ${i} < 0` }));
    const costly = kindOf({ big: { type: 'object', properties: { s: { type: 'string', maxLength: 100_000 } }, 'x-kubernetes-validations': rules } });
    expect(refusals(costly, { big: { s: 'x'.repeat(100_000) } })).toEqual([
      'spec.big: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect(refusals(costly, { big: { s: 'x'.repeat(1000) } })).toEqual([]);
  });
});

describe("error shapes, to the character (kube-apiserver 1.36's field errors)", () => {
  const shapes = servedAt(
    customKindOf({
      ...crd,
      spec: {
        ...crd.spec,
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      addresses: { type: 'array', items: { type: 'string', oneOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } },
                      either: { type: 'string', anyOf: [{ maxLength: 2 }, { pattern: '^x' }] },
                      both: { type: 'integer', allOf: [{ minimum: 1 }, { maximum: 3 }] },
                      notThree: { type: 'integer', not: { enum: [3] } },
                      ports: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['protocol', 'name'],
                        items: { type: 'object', required: ['name', 'protocol'], properties: { protocol: { type: 'string' }, name: { type: 'string' } } },
                      },
                      set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', 'x-kubernetes-map-type': 'atomic', 'x-kubernetes-preserve-unknown-fields': true } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    } as any),
    'v1',
  );
  const spec = (s: Record<string, unknown>) => messages(shapes.validate(thing(s)));

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      "oneOf with none valid: the composite error on no field, then the closest alternative's errors",
      { addresses: ['1.2.3.4', 'nope'] },
      [
        '<nil>: Invalid value: "": "spec.addresses[1]" must validate one and only one schema (oneOf). Found none valid',
        'spec.addresses[1]: Invalid value: "nope": spec.addresses[1] in body must be of type ipv4: "nope"',
      ],
    ],
    ['anyOf with none valid', { either: 'abc' }, ['<nil>: Invalid value: "": "spec.either" must validate at least one schema (anyOf)', 'spec.either: Too long: may not be more than 2 bytes']],
    [
      'allOf: each failure, then the composite',
      { both: 5 },
      ['spec.both: Invalid value: 5: spec.both in body should be less than or equal to 3', '<nil>: Invalid value: "": "spec.both" must validate all the schemas (allOf)'],
    ],
    ['not', { notThree: 3 }, ['<nil>: Invalid value: "": "spec.notThree" must not validate the schema (not)']],
    [
      'a list-map duplicate: its keys as a Go map, sorted',
      {
        ports: [
          { protocol: 'TCP', name: 'a' },
          { protocol: 'TCP', name: 'a' },
        ],
      },
      ['spec.ports[1]: Duplicate value: {"name":"a","protocol":"TCP"}'],
    ],
    [
      'a set duplicate of objects: keys sorted, Go escaping',
      {
        set: [
          { b: '<', a: 1 },
          { a: 1, b: '<' },
        ],
      },
      ['spec.set[1]: Duplicate value: {"a":1,"b":"\\u003c"}'],
    ],
  ])('%s', (_name, s, want) => {
    expect(spec(s)).toEqual(want);
  });
});

describe('validation ratcheting (Kubernetes 1.33): an update that leaves an invalid value as it was is accepted', () => {
  // Stored before the schema was tightened: a name too long, replicas above the maximum (a CEL rule), a port of 0.
  const stored = () => thing({ name: 'TooLongName', replicas: 9, maxReplicas: 5, ports: [{ name: 'p', port: 0 }] });
  const labelled = () => ({ ...stored(), metadata: { ...stored().metadata, labels: { team: 'a' } } });

  it('a label added (kubectl label): no schema error, no CEL error', () => {
    expect(messages(kind.validateUpdate!(labelled(), stored()))).toEqual([]);
  });

  it('a change elsewhere in the same object leaves the untouched values ratcheted, the rules on changed values run', () => {
    const next = stored();
    next.spec.colour = 'red';
    // spec changed, so spec's own rule runs again; name and ports[0] did not, so their errors stay dropped.
    expect(messages(kind.validateUpdate!(next, stored()))).toEqual(['spec: Invalid value: replicas 9 above 5']);
  });

  it('an invalid value that changes is refused, even to another invalid one', () => {
    const next = stored();
    next.spec.name = 'StillTooLong';
    expect(messages(kind.validateUpdate!(next, stored()))).toContain('spec.name: Too long: may not be more than 10 bytes');
  });

  it('map-list items pair by key: an untouched item keeps its ratchet while another is added', () => {
    const next = stored();
    next.spec.ports = [
      { name: 'p', port: 0 },
      { name: 'q', port: 0 },
    ];
    expect(messages(kind.validateUpdate!(next, stored())).filter((m) => m.startsWith('spec.ports'))).toEqual([
      'spec.ports[1].port: Invalid value: 0: spec.ports[1].port in body should be greater than or equal to 1',
    ]);
  });

  it('a create is never ratcheted', () => {
    expect(messages(kind.validate(stored())).length).toBeGreaterThan(0);
  });
});
