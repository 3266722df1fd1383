/**
 * Kubernetes' own table of CRD rules: apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go
 * TestValidationExpressions (v1.36), converted to JSON in test/fixtures/cel/validation-expressions.json
 * (schema, object, old object, the rules that must hold, and the rules that must fail with the text
 * their error must contain). Each rule runs here through the same compile and evaluation a CRD's
 * rule goes through on a write. Rows that cannot match are skipped by name below, with why.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { compileSchemaRule, runSchemaRule, SchemaRuleScope, type CelSchema } from '../../src/cel/index.js';
import { selfSchema } from '../../src/resources/crd/schema-rules.js';

interface Case {
  name: string;
  schema: CelSchema;
  obj: unknown;
  oldObj?: unknown;
  valid?: string[];
  errors?: Record<string, string>;
  isRoot?: boolean;
  expectSkipped?: boolean;
}

const cases = JSON.parse(readFileSync(new URL('../fixtures/cel/validation-expressions.json', import.meta.url), 'utf8')) as Case[];

/** Runs one rule: 'skipped', true/false, or the text of its compile or evaluation error. */
function run(c: Case, rule: string): unknown {
  const schema = c.isRoot ? (selfSchema(c.schema as never, true) as CelSchema) : c.schema;
  const r = compileSchemaRule({ rule }, schema, 'x-kubernetes-validations[0]');
  // The validator reports a rule that does not compile as a compile error.
  if (!r.ok) return `compile error: ${r.errors.map((e) => e.detail).join('\n')}`;
  // A transition rule is skipped without an old value (null in Go's table: nil).
  const old = c.oldObj ?? undefined;
  if (r.rule.usesOldSelf && old === undefined) return 'skipped';
  try {
    return runSchemaRule(r.rule, new SchemaRuleScope({ self: c.obj, ...(old !== undefined ? { oldSelf: old } : {}) }, schema), { remaining: 1e9, timeoutMs: 5000 });
  } catch (e) {
    return (e as Error).message;
  }
}

/** `${case} :: ${rule}` → why it cannot match yet. */
const SKIPS = new Map<string, string>(
  Object.entries({
    "library: string.format's %e does not write cel-go's ×10ⁿ form": ["unicode strings :: '%e'.format([3.14]) == '3.140000×10⁰⁰'"],
    "set and map list semantics: kube-apiserver compares an x-kubernetes-list-type set regardless of order and a map list by its keys, and + unions or merges them; orchd's lists are plain lists": [
      "listSets :: self.val1 == ['c', 'b', 'a']",
      'listSets :: self.val1 == self.val2',
      "listSets :: self.val1 + self.val2 == ['a', 'b', 'c']",
      "listSets :: self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
      'listMaps :: self.objs[0] == self.objs[1]',
      'listMaps :: self.objs[0] + self.objs[2] == self.objs[2]',
      'listMaps :: self.objs[2] + self.objs[0] == self.objs[0]',
      'listMaps :: self.objs[0] == [self.objs[0][1], self.objs[0][0]]',
      'listMaps :: self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]',
      'listMaps with unsupported identity characters in property names :: self.objs[0] == self.objs[1]',
      "listMaps with unsupported identity characters in property names :: self.objs[0][0].k! == '1'",
    ],
    'library: string(timestamp) of a time with an offset writes it in UTC (a JavaScript date keeps no zone; cel-go keeps the parsed offset)': ['conversions :: string(self.val11) == self.val10'],
    'library: url.getQuery() returns a map that does not compare equal to a map literal': ["URL parsing :: url(self.url).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}"],
    'library: the zero timestamp and duration are not recognised by ofNonZeroValue': [
      "optionals :: optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00.000+00:00')) == optional.none()",
      "optionals :: optional.ofNonZeroValue(duration('0s')) == optional.none()",
    ],
    "library: format.dns1123SubdomainPrefix() refuses a trailing '-' kube-apiserver allows in a prefix": [
      'format :: format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-") == optional.none()',
    ],
    'parser: \\u escapes in bytes literals do not parse': ["bytes :: self.val1 == b'\\u0041\\u0042'"],
    "library: a time zone given as a bare offset ('01:00') is refused by the timestamp accessors": [
      "date-time format :: self.val1.getDate('01:00') == 18",
      "date-time format :: self.val1.getMonth('01:00') == 7",
      "date-time format :: self.val1.getFullYear('01:00') == 2011",
      "date-time format :: self.val1.getHours('01:00') == 19",
      "date-time format :: self.val1.getMinutes('01:00') == 03",
      "date-time format :: self.val1.getSeconds('01:00') == 37",
    ],
    'validator: timestamp() of an out-of-range int literal is only refused at run time': ['date-time format :: timestamp(-62135596801)'],
    'library: lists.sortBy (ext lists v3 macro) is not implemented': [
      'ext lists version 3 :: [].sortBy(e, e) == []',
      'ext lists version 3 :: ["a"].sortBy(e, e) == ["a"]',
      'ext lists version 3 :: [-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]',
      'ext lists version 3 :: [-3, 1, -5, -2, 4].map(e, e * 2).sortBy(e, -(e * e)) == [-10, 8, -6, -4, 2]',
      'ext lists version 3 :: lists.range(3).sortBy(e, -e) == [2, 1, 0]',
      'ext lists version 3 :: ["a", "c", "b", "first"].sortBy(e, e == "first" ? "" : e) == ["first", "a", "b", "c"]',
      "ext lists version 3 :: [{'name': 'foo'}, {'name': 'bar'}, {'name': 'baz'}].sortBy(e, e.name) == [{'name': 'bar'}, {'name': 'baz'}, {'name': 'foo'}]",
    ],
    "wording: the error lacks kube-apiserver's 'evaluating rule: …' suffix": ['ext lists version 3 :: [[1],[2],[3,4]].flatten(-1) == [1,2,3,4]'],
    "typing: an object's field by index (self.a['b']) is allowed by this checker": ["object access :: self.a['b'] == 1"],
    'library: the two-variable comprehensions (ext.TwoVarComprehensions, 1.32) are not implemented': [
      'map access :: self.val.all(k, v, v > 0)',
      'map access :: self.val.exists(k, v, v == 2)',
      'map access :: self.val.existsOne(k, v, v == 2)',
      'map access :: self.val.transformMap(k, v, v > 1, v + 1).size() == 1',
      'map access :: self.val.transformMap(k, v, v + 1).size() == 2',
      "map access :: self.val.transformMapEntry(k, v, v > 1, {k + '2': v + 1}).size() == 1",
      "map access :: self.val.transformMapEntry(k, v, {k + '2': v + 1}).size() == 2",
      "listMap access :: !self.listMap.all(i, m, has(m.v2) && m.v2 != 'z')",
      "listMap access :: self.listMap.exists(i, m, has(m.v2) && m.v2 == 'z')",
      "listMap access :: self.listMap.existsOne(i, m, has(m.v2) && m.v2 == 'z')",
      "listMap access :: self.listMap.transformList(i, m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
      'listMap access :: self.listMap.transformList(i, m, m.v).size() == 3',
      'list access :: self.array.all(i, e, e > 0)',
      'list access :: self.array.exists(i, e, e > 2)',
      'list access :: self.array.existsOne(i, e, e > 4)',
      'list access :: self.array.transformList(i, e, e > 2, e * 2).size() > 0',
      'list access :: self.array.transformList(i, e, e * 2).size() > 0',
    ],
    'typing: embedded resources and objects with x-kubernetes-preserve-unknown-fields are dyn maps to this checker, so an undeclared field compiles (kube-apiserver types them as objects of their declared fields); refuses nothing kube-apiserver accepts':
      [
        'embedded object :: has(self.embedded.metadata.namespace)',
        'embedded object with properties :: has(self.embedded.metadata.namespace)',
        'embedded object :: has(self.embedded.spec)',
        'embedded object with preserve unknown :: has(self.embedded.spec)',
        'preserve unknown fields :: has(self.withUnknown.field1)',
        'preserve unknown fields :: has(self.anyvalList)',
        'preserve unknown fields :: has(self.anyvalMap)',
        'preserve unknown fields :: has(self.anyvalField1)',
        'preserve unknown fields :: has(self.anyvalField2)',
        'known and unknown fields :: has(self.withUnknown.unknown)',
      ],
    "parser: syntax errors are worded by the library's parser, not ANTLR's (mismatched input …)": ['escaping :: self.true == 1'],
    "wording: string(type) is refused in the library's words": ["object types are not accessible :: string(type(self.nestedInList[0])).endsWith('.nestedInList.@idx')"],
    "data of the wrong shape never reaches a rule here: the schema's value validation refuses it first (the table's own comment says these errors are not surfaced to users)": [
      'invalid data :: has(self.o)',
      'invalid data :: has(self.m)',
      'invalid data :: has(self.l)',
      'invalid data :: has(self.s)',
      'invalid data :: has(self.lm)',
      'invalid data :: has(self.intorstring)',
      "invalid data :: self.nullable[0] == 'x'",
    ],
    "library: duration('0') (Go's bare zero) does not parse": ["stdlib list functions :: self.emptyDurations.sum() == duration('0')"],
    "wording: the library names a method's missing overload as 'list.sum()', without cel-go's element types, or refuses it at run time": [
      "stdlib list functions :: ['a', 'b'].sum() == 'c'",
      'stdlib list functions :: [[1], [2]].min() == [1]',
      "stdlib list functions :: [{'a': 1}, {'b': 2}].max() == {'b': 2}",
    ],
    'library: optional entries in list and map literals ([?x], {?k: v}) do not parse': [
      "optionals :: {?'k': optional.none(), 'k2': 'v2'} == {'k2': 'v2'}",
      "optionals :: {?'k': optional.of('v'), 'k2': 'v2'} == {'k': 'v', 'k2': 'v2'}",
      "optionals :: ['a', ?optional.none(), 'c'] == ['a', 'c']",
      "optionals :: ['a', ?optional.of('v'), 'c'] == ['a', 'v', 'c']",
    ],
    "library: url() parses with WHATWG URL rules, which refuse 'https:://kubernetes.io/' that Go's url.Parse accepts": [
      "cost for extended lib calculated correctly: url :: url('https:://kubernetes.io/').getHostname() != 'test'",
    ],
    'library: the type names net.IP and net.CIDR are not declared as identifiers': ['IP and CIDR :: type(ip("192.168.0.1")) == net.IP', 'IP and CIDR :: type(cidr("2001:db8::/32").ip()) == net.IP'],
  }).flatMap(([why, rows]) => rows.map((row): [string, string] => [row, why])),
);

describe("Kubernetes' TestValidationExpressions", () => {
  for (const c of cases) {
    const valid = (c.valid ?? []).filter((r) => !SKIPS.has(`${c.name} :: ${r}`));
    const errors = Object.entries(c.errors ?? {}).filter(([r]) => !SKIPS.has(`${c.name} :: ${r}`));
    if (valid.length + errors.length === 0) continue;
    describe(c.name, () => {
      if (valid.length) {
        test.each(valid)('%s holds', (rule) => {
          expect(run(c, rule)).toBe(c.expectSkipped ? 'skipped' : true);
        });
      }
      if (errors.length) {
        test.each(errors)('%s fails with %s', (rule, text) => {
          const got = run(c, rule);
          expect(typeof got === 'string' ? got : `evaluated to ${String(got)}`).toContain(text);
        });
      }
    });
  }
  test('every skip names a row', () => {
    const rows = new Set(cases.flatMap((c) => [...(c.valid ?? []), ...Object.keys(c.errors ?? {})].map((r) => `${c.name} :: ${r}`)));
    for (const k of SKIPS.keys()) expect(rows).toContain(k);
  });
});
