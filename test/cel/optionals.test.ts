/** Optionals compared, as in cel-go (src/cel/lib/optionals.ts). */
import { expect, test } from 'vitest';
import { compileSchemaRule, runSchemaRule, SchemaRuleScope, type CelSchema } from '../../src/cel/index.js';

const schema: CelSchema = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } };

function run(rule: string, self: unknown): unknown {
  const r = compileSchemaRule({ rule }, schema, 'spec.x-kubernetes-validations[0]');
  if (!r.ok) return r.errors.map((e) => e.detail).join('\n');
  return runSchemaRule(r.rule, new SchemaRuleScope({ self }, schema), { remaining: 1e9, timeoutMs: 5000 });
}

test.each<[string, unknown, boolean]>([
  ['self.?tags == null', {}, false],
  ['self.?tags != null', { tags: [] }, true],
  ['null == self.?tags', {}, false],
  ['self.?tags == optional.none()', {}, true],
  ['self.?tags == optional.none()', { tags: ['a'] }, false],
  ['optional.none() == self.?tags', {}, true],
  ["self.?tags == optional.of(['a'])", { tags: ['a'] }, true],
  ["self.?tags != optional.of(['a'])", { tags: ['b'] }, true],
  ["self.?tags != optional.of(['a'])", {}, true],
])('%s on %j is %s', (rule, self, want) => {
  expect(run(rule, self)).toBe(want);
});

// cel-go's optMap, optFlatMap and ofNonZeroValue (src/cel/lib/optional-macros.ts), with the cases
// of cel-spec's optionals tests and Kubernetes' cost-stability rules.
test.each<[string, unknown, boolean]>([
  ['self.?tags.optMap(t, t.size()) == optional.of(1)', { tags: ['a'] }, true],
  ['self.?tags.optMap(t, t.size()) == optional.none()', {}, true],
  ["self.?tags.optMap(t, t[0]).orValue('none') == 'a'", { tags: ['a'] }, true],
  ['self.?tags.optFlatMap(t, t[?0]).hasValue()', { tags: [] }, false],
  ["self.?tags.optFlatMap(t, t[?0]) == optional.of('x')", { tags: ['x'] }, true],
  ['self.?tags.optFlatMap(t, t[?0]).hasValue()', {}, false],
  ["optional.of('a').optMap(v, v == 'value').hasValue()", {}, true],
  ['optional.ofNonZeroValue(1).hasValue()', {}, true],
  ['optional.ofNonZeroValue(0).hasValue()', {}, false],
  ["optional.ofNonZeroValue('').hasValue()", {}, false],
  ['optional.ofNonZeroValue([]).hasValue()', {}, false],
  ['optional.ofNonZeroValue([0]).hasValue()', {}, true],
  ['optional.ofNonZeroValue({}).hasValue()', {}, false],
])('%s on %j is %s', (rule, self, want) => {
  expect(run(rule, self)).toBe(want);
});

test('optFlatMap refuses an expression that is not optional, as cel-go does', () => {
  expect(run('self.?tags.optFlatMap(t, t.size()).hasValue()', {})).toMatch(/must be optional/);
});

test('objects of one schema type compare, and compare with null (cel-go allows both)', () => {
  const items: CelSchema = { type: 'array', items: { type: 'object', properties: { f: { type: 'string' } } } };
  const go = (rule: string, self: unknown) => {
    const r = compileSchemaRule({ rule }, items, 'x');
    if (!r.ok) return r.errors.map((e) => e.detail).join('\n');
    return runSchemaRule(r.rule, new SchemaRuleScope({ self }, items), { remaining: 1e9, timeoutMs: 5000 });
  };
  expect(go('self[0] == self[1]', [{ f: 'a' }, { f: 'a' }])).toBe(true);
  expect(go('self[0] == self[1]', [{ f: 'a' }, { f: 'b' }])).toBe(false);
  expect(go('self[0] != self[1]', [{ f: 'a' }, {}])).toBe(true);
  expect(go('self[0] == null', [{ f: 'a' }])).toBe(false);
});
