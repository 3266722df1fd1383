/**
 * A CustomResourceDefinition checked as kube-apiserver checks one (resources/crd/validate-crd.ts and
 * validate-schema.ts): one row per rule, each a change to a valid CRD and the [type, field] of every
 * error it must bring, with no other. A valid CRD has none.
 */
import { describe, expect, it } from 'vitest';
import { customResourceDefinition as crdKind } from '../../src/resources/custom-resource-definition.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { fixtures, pairs } from './fixtures.js';

const S = 'spec.versions[0].schema.openAPIV3Schema';

/** A valid CRD, defaulted as a create defaults it, after `change`. */
function crd(change: (c: any, schema: any) => void = () => undefined): any {
  const c = fixtures.customResourceDefinition();
  change(c, c.spec.versions[0].schema.openAPIV3Schema);
  crdKind.prepareForCreate(c);
  crdKind.applyDefaults(c);
  return c;
}
const errorsOf = (change: (c: any, schema: any) => void) => crdKind.validate(crd(change));
const spec = (s: any) => s.properties.spec;

describe('a valid CRD', () => {
  it("has no errors, and its defaults are v1's", () => {
    const c = crd();
    expect(crdKind.validate(c)).toEqual([]);
    expect(c.spec.names).toMatchObject({ singular: 'widget', listKind: 'WidgetList' });
    expect(c.spec.conversion).toEqual({ strategy: 'None' });
    expect(c.status).toEqual({ storedVersions: ['v1'] });
  });
});

describe('names, group, scope, versions', () => {
  it.each<[string, (c: any) => void, [string, string][]]>([
    ['a name other than <plural>.<group>', (c) => (c.metadata.name = 'widgets.other.com'), [['FieldValueInvalid', 'metadata.name']]],
    [
      'no group',
      (c) => (c.spec.group = ''),
      [
        ['FieldValueInvalid', 'metadata.name'],
        ['FieldValueRequired', 'spec.group'],
      ],
    ],
    ['a group without a dot', (c) => ((c.spec.group = 'example'), (c.metadata.name = 'widgets.example')), [['FieldValueInvalid', 'spec.group']]],
    ['a scope that is neither', (c) => (c.spec.scope = 'Global'), [['FieldValueNotSupported', 'spec.scope']]],
    ['no scope', (c) => delete c.spec.scope, [['FieldValueRequired', 'spec.scope']]],
    ['an upper-case plural', (c) => ((c.spec.names.plural = 'Widgets'), (c.metadata.name = 'Widgets.example.com')), [['FieldValueInvalid', 'spec.names.plural']]],
    // The singular defaults to the kind in lower case, so it fails too.
    [
      'a kind that is no DNS label',
      (c) => ((c.spec.names.kind = 'Wid_get'), (c.spec.names.listKind = 'WidgetList')),
      [
        ['FieldValueInvalid', 'spec.names.singular'],
        ['FieldValueInvalid', 'spec.names.kind'],
      ],
    ],
    ['kind and listKind the same', (c) => (c.spec.names.listKind = 'Widget'), [['FieldValueInvalid', 'spec.names.listKind']]],
    ['a bad short name', (c) => (c.spec.names.shortNames = ['w_d']), [['FieldValueInvalid', 'spec.names.shortNames[0]']]],
    ['no storage version', (c) => (c.spec.versions[0].storage = false), [['FieldValueInvalid', 'spec.versions']]],
    ['two versions of one name', (c) => c.spec.versions.push({ ...c.spec.versions[0], storage: false }), [['FieldValueInvalid', 'spec.versions']]],
    ['a version name that is no DNS label', (c) => (c.spec.versions[0].name = 'V1'), [['FieldValueInvalid', 'spec.versions[0].name']]],
    ['no schema', (c) => delete c.spec.versions[0].schema, [['FieldValueRequired', 'spec.versions[0].schema.openAPIV3Schema']]],
    ['preserveUnknownFields', (c) => (c.spec.preserveUnknownFields = true), [['FieldValueInvalid', 'spec.preserveUnknownFields']]],
    ['a conversion webhook (orchd converts by apiVersion only)', (c) => (c.spec.conversion = { strategy: 'Webhook' }), [['FieldValueNotSupported', 'spec.conversion.strategy']]],
    ['a deprecation warning on a version not deprecated', (c) => (c.spec.versions[0].deprecationWarning = 'old'), [['FieldValueInvalid', 'spec.versions[0].deprecationWarning']]],
    ['a printer column of an unknown type', (c) => (c.spec.versions[0].additionalPrinterColumns[0].type = 'float'), [['FieldValueInvalid', 'spec.versions[0].additionalPrinterColumns[0].type']]],
    [
      'a printer column path without a leading dot',
      (c) => (c.spec.versions[0].additionalPrinterColumns[0].jsonPath = 'spec.size'),
      [['FieldValueInvalid', 'spec.versions[0].additionalPrinterColumns[0].JSONPath']],
    ],
    [
      'a scale path not under .spec',
      (c) => (c.spec.versions[0].subresources.scale = { specReplicasPath: '.status.size', statusReplicasPath: '.status.n' }),
      [['FieldValueInvalid', 'spec.versions[0].subresources.scale.specReplicasPath']],
    ],
    [
      'a selectable field that is not declared',
      (c) => (c.spec.versions[0].selectableFields = [{ jsonPath: '.spec.colour' }]),
      [['FieldValueInvalid', 'spec.versions[0].selectableFields[0].jsonPath']],
    ],
    ['a selectable field of an object', (c) => (c.spec.versions[0].selectableFields = [{ jsonPath: '.spec' }]), [['FieldValueInvalid', 'spec.versions[0].selectableFields[0].jsonPath']]],
  ])('%s', (_name, change, expected) => {
    expect(pairs(errorsOf(change))).toEqual(expected);
  });

  it('words errors as kube-apiserver does', () => {
    const errs = errorsOf((c) => (c.metadata.name = 'widgets.other.com')).map(formatFieldError);
    expect(errs).toEqual(['metadata.name: Invalid value: "widgets.other.com": must be spec.names.plural+"."+spec.group']);
  });
});

describe('the schema: structural, supported, sound', () => {
  it.each<[string, (s: any) => void, [string, string][]]>([
    ['no type at the root', (s) => delete s.type, [['FieldValueRequired', `${S}.type`]]],
    // With status a subresource, the root says so in its own words too.
    [
      'a root that is no object',
      (s) => (s.type = 'array'),
      [
        ['FieldValueInvalid', `${S}.type`],
        ['FieldValueRequired', `${S}.items`],
        ['FieldValueInvalid', `${S}.type`],
      ],
    ],
    ['a field without a type', (s) => delete spec(s).properties.size.type, [['FieldValueRequired', `${S}.properties[spec].properties[size].type`]]],
    ['an array without items', (s) => (spec(s).properties.tags = { type: 'array' }), [['FieldValueRequired', `${S}.properties[spec].properties[tags].items`]]],
    ['an unknown type', (s) => (spec(s).properties.size.type = 'int'), [['FieldValueNotSupported', `${S}.properties[spec].properties[size].type`]]],
    ['$ref', (s) => (spec(s).properties.size.$ref = '#/x'), [['FieldValueForbidden', `${S}.properties[spec].properties[size].$ref`]]],
    [
      'uniqueItems',
      (s) => (spec(s).properties.tags = { type: 'array', items: { type: 'string' }, uniqueItems: true }),
      [['FieldValueForbidden', `${S}.properties[spec].properties[tags].uniqueItems`]],
    ],
    ['properties and additionalProperties together', (s) => (spec(s).additionalProperties = { type: 'string' }), [['FieldValueForbidden', `${S}.properties[spec].additionalProperties`]]],
    ['a pattern RE2 does not compile', (s) => (spec(s).properties.name = { type: 'string', pattern: '(?=a)' }), [['FieldValueInvalid', `${S}.properties[spec].properties[name].pattern`]]],
    ['metadata beyond name and generateName', (s) => (s.properties.metadata = { type: 'object', properties: { labels: { type: 'object' } } }), [['FieldValueForbidden', `${S}.properties[metadata]`]]],
    ['a default in the root metadata', (s) => (s.properties.metadata = { type: 'object', default: {} }), [['FieldValueForbidden', `${S}.properties[metadata].default`]]],
    ['a default of the wrong type', (s) => (spec(s).properties.size.default = 'one'), [['FieldValueTypeInvalid', `${S}.properties[spec].properties[size].default`]]],
    ['a default below its minimum', (s) => (spec(s).properties.size.default = -1), [['FieldValueInvalid', `${S}.properties[spec].properties[size].default`]]],
    ['a default with a field the schema prunes', (s) => (spec(s).default = { size: 1, colour: 'red' }), [['FieldValueInvalid', `${S}.properties[spec].default`]]],
    ['a list type on a non-array', (s) => (spec(s).properties.size['x-kubernetes-list-type'] = 'set'), [['FieldValueInvalid', `${S}.properties[spec].properties[size].type`]]],
    [
      'a map list without keys',
      (s) => (spec(s).properties.ports = { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { name: { type: 'string' } } } }),
      [['FieldValueRequired', `${S}.properties[spec].properties[ports].x-kubernetes-list-map-keys`]],
    ],
    [
      'a map list key neither required nor defaulted',
      (s) =>
        (spec(s).properties.ports = { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' } } } }),
      [['FieldValueRequired', `${S}.properties[spec].properties[ports].items.properties[name].default`]],
    ],
    [
      'a set of granular objects',
      (s) => (spec(s).properties.pairs = { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', properties: { a: { type: 'string' } } } }),
      [['FieldValueInvalid', `${S}.properties[spec].properties[pairs].items.x-kubernetes-map-type`]],
    ],
    [
      'an embedded resource that is no object',
      (s) => (spec(s).properties.thing = { type: 'string', 'x-kubernetes-embedded-resource': true }),
      [
        ['FieldValueInvalid', `${S}.properties[spec].properties[thing].type`],
        ['FieldValueRequired', `${S}.properties[spec].properties[thing].properties`],
      ],
    ],
    [
      'an embedded resource with nothing declared or preserved',
      (s) => (spec(s).properties.thing = { type: 'object', 'x-kubernetes-embedded-resource': true }),
      [['FieldValueRequired', `${S}.properties[spec].properties[thing].properties`]],
    ],
    [
      'int-or-string and preserve-unknown-fields',
      (s) => (spec(s).properties.n = { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [['FieldValueInvalid', `${S}.properties[spec].properties[n].x-kubernetes-preserve-unknown-fields`]],
    ],
    ['a type inside anyOf (not structural)', (s) => (spec(s).properties.size.anyOf = [{ type: 'integer' }]), [['FieldValueForbidden', `${S}.properties[spec].properties[size].anyOf[0].type`]]],
    [
      'nullable at the root',
      (s) => (s.nullable = true),
      [
        ['FieldValueInvalid', S],
        ['FieldValueForbidden', `${S}.nullable`],
      ],
    ],
  ])('%s', (_name, change, expected) => {
    expect(pairs(errorsOf((_c, s) => change(s)))).toEqual(expected);
  });

  it('the int-or-string anyOf pattern is structural', () => {
    expect(errorsOf((_c, s) => (spec(s).properties.n = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }))).toEqual([]);
  });
});

describe('CEL rules of the schema', () => {
  const rulesAt = (rules: unknown[], where: (s: any) => any = spec) => errorsOf((_c, s) => (where(s)['x-kubernetes-validations'] = rules));
  const R = `${S}.properties[spec].x-kubernetes-validations`;

  it.each<[string, unknown[], [string, string][]]>([
    ['a rule that does not compile', [{ rule: 'self.size >' }], [['FieldValueInvalid', `${R}[0].rule`]]],
    ['a rule naming a field the schema does not have', [{ rule: 'self.colour == "red"' }], [['FieldValueInvalid', `${R}[0].rule`]]],
    ['a rule that is not bool', [{ rule: 'self.size + 1' }], [['FieldValueInvalid', `${R}[0].rule`]]],
    ['an empty rule', [{ rule: '  ' }], [['FieldValueRequired', `${R}[0].rule`]]],
    ['a rule with line breaks and no message', [{ rule: 'self.size\n> 1' }], [['FieldValueRequired', `${R}[0].message`]]],
    ['a messageExpression that is not a string', [{ rule: 'self.size > 1', messageExpression: 'self.size' }], [['FieldValueInvalid', `${R}[0].messageExpression`]]],
    ['an unknown reason', [{ rule: 'self.size > 1', reason: 'FieldValueTooLong' }], [['FieldValueNotSupported', `${R}[0].reason`]]],
    ['a fieldPath the schema does not have', [{ rule: 'self.size > 1', fieldPath: '.colour' }], [['FieldValueInvalid', `${R}[0].fieldPath`]]],
    ['optionalOldSelf on a rule without oldSelf', [{ rule: 'self.size > 1', optionalOldSelf: true }], [['FieldValueInvalid', `${R}[0].optionalOldSelf`]]],
  ])('%s', (_name, rules, expected) => {
    expect(pairs(rulesAt(rules))).toEqual(expected);
  });

  it("words a compile error as kube-apiserver 1.36 does: the value is its internal apiextensions.ValidationRule, as Go's json.Marshal writes it", () => {
    const [e] = rulesAt([{ rule: 'self.colour == "red" && self.size < 3', reason: 'FieldValueForbidden' }]);
    expect(formatFieldError(e!)).toBe(
      `${S}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ` +
        '{"Rule":"self.colour == \\"red\\" \\u0026\\u0026 self.size \\u003c 3","Message":"","MessageExpression":"","Reason":"FieldValueForbidden","FieldPath":"","OptionalOldSelf":null}: ' +
        'compilation failed: ERROR: <input>:1:6: undefined field \'colour\'\n | self.colour == "red" && self.size < 3\n | .....^',
    );
  });

  it('oldSelf only where old and new can be paired: not inside an atomic list', () => {
    const errs = errorsOf((_c, s) => (spec(s).properties.tags = { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 64, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } }));
    expect(pairs(errs)).toEqual([['FieldValueInvalid', `${S}.properties[spec].properties[tags].items.x-kubernetes-validations[0].rule`]]);
    expect(formatFieldError(errs[0]!)).toContain(`oldSelf cannot be used on the uncorrelatable portion of the schema within ${S}.properties[spec].properties[tags]`);
    // In a map list, items are paired by their keys: allowed.
    const paired = errorsOf(
      (_c, s) =>
        (spec(s).properties.ports = {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.port == oldSelf.port' }] },
        }),
    );
    expect(paired).toEqual([]);
  });

  it("a rule over an unbounded list costs the list's largest size: refused until maxItems bounds it", () => {
    const list = (maxItems?: number) => ({
      type: 'array',
      ...(maxItems ? { maxItems } : {}),
      items: { type: 'string', maxLength: 64 },
      'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, a != b || a == b))' }],
    });
    const unbounded = errorsOf((_c, s) => (spec(s).properties.names = list()));
    expect(pairs(unbounded)).toEqual(expect.arrayContaining([['FieldValueForbidden', `${S}.properties[spec].properties[names].x-kubernetes-validations[0].rule`]]));
    expect(formatFieldError(unbounded[0]!)).toMatch(
      /estimated rule cost exceeds budget by factor of (more than 100x|[\d.]+x) \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/,
    );
    expect(errorsOf((_c, s) => (spec(s).properties.names = list(20)))).toEqual([]);
  });

  it('rules each within the per-rule limit, together over the limit for the whole schema: the costliest four named, then the total', () => {
    const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ rule: `self.matches('^x*${'y?'.repeat(48)}$') || ${i} < 0` }));
    const big = (n: number) => (_c: unknown, s: any) => (spec(s).properties.big = { type: 'string', maxLength: 750_000, 'x-kubernetes-validations': rules(n) });
    const errs = errorsOf(big(14));
    const rule = (i: number) => ['FieldValueForbidden', `${S}.properties[spec].properties[big].x-kubernetes-validations[${i}].rule`];
    expect(pairs(errs)).toEqual([rule(0), rule(1), rule(2), rule(3), ['FieldValueForbidden', S]]);
    expect(formatFieldError(errs[0]!)).toBe(
      `${S}.properties[spec].properties[big].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    );
    expect(formatFieldError(errs[4]!)).toMatch(
      new RegExp(`^${S.replace(/[.[\]]/g, '\\$&')}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of [\\d.]+x`),
    );
    // Fewer of the same rules fit.
    expect(errorsOf(big(10))).toEqual([]);
  });

  it('refuses every error of a bad CRD at once: schema, rules and names together', () => {
    const errs = errorsOf((c, s) => {
      c.spec.scope = 'Everywhere';
      spec(s).properties.size.type = 'int';
      s.properties.status['x-kubernetes-validations'] = [{ rule: 'self.x ==' }];
    });
    expect(pairs(errs)).toEqual([
      ['FieldValueNotSupported', 'spec.scope'],
      ['FieldValueNotSupported', `${S}.properties[spec].properties[size].type`],
      ['FieldValueInvalid', `${S}.properties[status].x-kubernetes-validations[0].rule`],
    ]);
  });
});

describe('updates', () => {
  const established = (c: any) => ({ ...c, status: { ...c.status, conditions: [{ type: 'Established', status: 'True' }] } });

  it('group and plural never change; scope and kind not once established; stored versions stay listed', () => {
    const old = established(crd());
    const next = crd((c) => ((c.spec.scope = 'Cluster'), (c.spec.names.kind = 'Gadget'), (c.spec.names.listKind = 'GadgetList')));
    expect(pairs(crdKind.validateUpdate(next, old))).toEqual([
      ['FieldValueInvalid', 'spec.scope'],
      ['FieldValueInvalid', 'spec.names.kind'],
    ]);
    expect(crdKind.validateUpdate(next, crd())).toEqual([]);
    const renamed = crd((c) => ((c.spec.group = 'other.com'), (c.metadata.name = 'widgets.other.com')));
    expect(pairs(crdKind.validateUpdate(renamed, old))).toEqual([['FieldValueInvalid', 'spec.group']]);
    const dropped = crd((c) => (c.spec.versions[0].name = 'v2'));
    dropped.status.storedVersions = ['v1'];
    crdKind.prepareForUpdate(dropped);
    expect(dropped.status.storedVersions).toEqual(['v1', 'v2']);
    expect(pairs(crdKind.validateUpdate(dropped, old))).toEqual([['FieldValueInvalid', 'status.storedVersions[0]']]);
  });
});

describe('how often a rule may run, as kube-apiserver bounds it', () => {
  const R = (p: string) => `${S}.properties[spec].properties[${p}]`;
  const item = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 64 } }, 'x-kubernetes-validations': [{ rule: "self.name != 'x'" }] };

  it('under lists with no maxItems, nested: as many items as fit in a request, not the product of the unbounded sizes', () => {
    // The item's smallest JSON is {"name":""}: 12 bytes, so 3 MiB / 13 items at most, each rule run
    // costing a few units: well under 10M (the product of both lists' bounds is ~10^11).
    expect(errorsOf((_c, s) => (spec(s).properties.groups = { type: 'array', items: { type: 'array', items: item } }))).toEqual([]);
  });

  it('a messageExpression is charged once, not once per item as its rule is (validation.go checks MessageExpressionMaxCost alone)', () => {
    // `self + '!'` on a string of up to 3 MiB costs 314,574: under the limit once, 10,000 times over it.
    const names = { type: 'array', maxItems: 10_000, items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'x'", messageExpression: "self + '!'" }] } };
    expect(errorsOf((_c, s) => (spec(s).properties.names = names))).toEqual([]);
  });

  it('over the total, rules under 1% of it are not named, only the total (TotalCost.ObserveExpressionCost)', () => {
    // Each rule: ceil((3,000,000 + 1) × 0.1) × ceil(7 × 0.25) + 1 = 600,003; 170 of them: 102,000,510.
    const rules = Array.from({ length: 170 }, () => ({ rule: "self.matches('^x*y?$')" }));
    const errs = errorsOf((_c, s) => (spec(s).properties.big = { type: 'string', maxLength: 750_000, 'x-kubernetes-validations': rules }));
    expect(errs.map(formatFieldError)).toEqual([
      `${S}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.020005x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
  });

  it('bounded lists multiply their maxItems', () => {
    const rules = [{ rule: 'self.all(x, self.all(y, x == y))' }];
    const list = (maxItems: number) => ({ type: 'array', maxItems, items: { type: 'string', maxLength: 8 }, 'x-kubernetes-validations': rules });
    expect(errorsOf((_c, s) => (spec(s).properties.tags = { type: 'array', maxItems: 10, items: list(100) }))).toEqual([]);
    const errs = errorsOf((_c, s) => (spec(s).properties.tags = { type: 'array', maxItems: 10_000, items: list(100) }));
    // Per run: 2 + 100 × (3 + inner), inner = 2 + 100 × (3 + 6), where x == y costs 2 for its
    // operands and ceil(32 bytes × 0.1): 90,502, run 10,000 times: 90.5× the rule's limit.
    expect(formatFieldError(errs[0]!)).toBe(
      `${R('tags')}.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 90.5x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    );
  });

  it('a string sized by maxLength counts 4 bytes a code point; an enum, its longest value', () => {
    const matches = [{ rule: "self.matches('^[a-z]+(-[a-z]+)*$')" }];
    // 100 strings of up to 3 MiB: ceil(3 MiB × 0.1) × ceil(20 × 0.25) each, refused; with a maxLength
    // of 63 (252 bytes: 26 × 5) or an enum (10 bytes), accepted.
    const under = (str: object) => (_c: unknown, s: any) => (spec(s).properties.names = { type: 'array', maxItems: 100, items: { ...str, 'x-kubernetes-validations': matches } });
    expect(formatFieldError(errorsOf(under({ type: 'string' }))[0]!)).toMatch(/^.*\.items\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of 15\.7x/);
    expect(errorsOf(under({ type: 'string', maxLength: 63 }))).toEqual([]);
    expect(errorsOf(under({ type: 'string', enum: ['alpha', 'beta-gamma'] }))).toEqual([]);
  });
});

// The cost cases of apiextensions-apiserver/pkg/apis/apiextensions/validation/validation_test.go (v1.36).
describe("the cost cases of Kubernetes' CRD validation tests", () => {
  const P = (p: string) => `${S}.properties[${p}]`;
  const concat8 = 'self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]';

  it('forbid validation rules where cost total exceeds total limit: the rule over its limit twice, the one over 1% once, then the total', () => {
    const errs = errorsOf((_c, s) => {
      s.properties.list = { type: 'array', maxItems: 100_000, items: { type: 'string', maxLength: 5000, 'x-kubernetes-validations': [{ rule: "self.contains('keyword')" }] } };
      s.properties.map = { type: 'object', maxProperties: 1000, additionalProperties: { type: 'string', maxLength: 5000, 'x-kubernetes-validations': [{ rule: "self.contains('keyword')" }] } };
      s.properties.field = { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 50 && self < 100' }] };
    });
    expect(pairs(errs)).toEqual([
      ['FieldValueForbidden', `${P('list')}.items.x-kubernetes-validations[0].rule`],
      ['FieldValueForbidden', `${P('list')}.items.x-kubernetes-validations[0].rule`],
      ['FieldValueForbidden', `${P('map')}.additionalProperties.x-kubernetes-validations[0].rule`],
      ['FieldValueForbidden', S],
    ]);
    // 100,000 × (ceil(20,000 × 0.1) × ceil(7 × 0.1) + 1) + 1,000 × 2,001 + the field's rule.
    expect(formatFieldError(errs[3]!)).toContain('exceeds budget by factor of 2.0x');
  });

  it('a messageExpression over the per-expression limit is refused on its own path', () => {
    const errs = errorsOf((_c, s) => (s.properties.f = { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'true', messageExpression: concat8 }] }));
    expect(pairs(errs)).toEqual([['FieldValueForbidden', `${P('f')}.x-kubernetes-validations[0].messageExpression`]]);
  });

  it('a rule with lowerAscii on small bounded strings is within the limit', () => {
    const rule = 'self.all(x, self.exists_one(y, x.lowerAscii() == y.lowerAscii()))';
    expect(errorsOf((_c, s) => (s.properties.f = { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 5 }, 'x-kubernetes-validations': [{ rule }] }))).toEqual([]);
  });

  it('a messageExpression over the per-CRD limit: its own limit, its contribution, and the total', () => {
    const messageExpression = 'string(self[0]) + string(self[1]) + string(self[2])';
    const errs = errorsOf((_c, s) => (s.properties.f = { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'true', messageExpression }] }));
    const m = `${P('f')}.x-kubernetes-validations[0].messageExpression`;
    expect(pairs(errs)).toEqual([
      ['FieldValueForbidden', m],
      ['FieldValueForbidden', m],
      ['FieldValueForbidden', S],
    ]);
    expect(formatFieldError(errs[2]!)).toContain('exceeds budget by factor of more than 100x');
  });

  it('suppress per-expression cost limit in pre-existing versions: an update leaving the schema as it was is not refused for it', () => {
    const withRule = (c: any) => {
      c.spec.versions[0].schema.openAPIV3Schema.properties.f = { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'true', messageExpression: concat8 }] };
      return c;
    };
    const old = crd(withRule);
    const relabelled = crd((c) => ((c.metadata.labels = { team: 'a' }), withRule(c)));
    expect(crdKind.validateUpdate(relabelled, old)).toEqual([]);
    // Any change to that version's schema brings the limit back.
    const changed = crd((c) => (withRule(c), (c.spec.versions[0].schema.openAPIV3Schema.properties.g = { type: 'string' })));
    expect(pairs(crdKind.validateUpdate(changed, old))).toEqual([['FieldValueForbidden', `${P('f')}.x-kubernetes-validations[0].messageExpression`]]);
  });
});
