/**
 * The static cost of a CRD rule, row by row as Kubernetes' own tests expect it: each row is the
 * schema and rule of a row of apiextensions-apiserver/pkg/apiserver/schema/cel/compilation_test.go
 * TestCostEstimation (v1.36), with the cost it asserts for the schema without the bound
 * ("calc") and with it ("set"). A cost of 0 there means "not checked", and is left out here too.
 */
import { describe, expect, test } from 'vitest';
import { compileSchemaRule, type CelSchema } from '../../src/cel/index.js';

type Gen = (max?: number) => CelSchema;
const rule = (s: CelSchema, r: string): CelSchema => ({ ...s, 'x-kubernetes-validations': [{ rule: r }] }) as CelSchema;
const typed = (t: string): CelSchema => {
  if (t === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  if (t === 'duration' || t === 'date' || t === 'date-time') return { type: 'string', format: t };
  return { type: t as CelSchema['type'] };
};
const bound = <K extends 'maxItems' | 'maxProperties' | 'maxLength'>(k: K, max?: number) => (max === undefined ? {} : { [k]: max });
const twoStrings = (): CelSchema => ({ type: 'object', required: ['required'], properties: { required: { type: 'string' }, optional: { type: 'string' } } });

const arrayOf =
  (t: string, r: string): Gen =>
  (max) =>
    rule({ type: 'array', items: typed(t), ...bound('maxItems', max) }, r);
const arrayOfArrays =
  (t: string, r: string): Gen =>
  (max) =>
    rule({ type: 'array', items: { type: 'array', items: typed(t) }, ...bound('maxItems', max) }, r);
const arrayOfObjects =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'array', items: twoStrings(), ...bound('maxItems', max) }, r);
const arrayOfMaps =
  (t: string, r: string): Gen =>
  (max) =>
    rule({ type: 'array', items: { type: 'object', additionalProperties: typed(t) }, ...bound('maxItems', max) }, r);
const mapOf =
  (t: string, r: string): Gen =>
  (max) =>
    rule({ type: 'object', additionalProperties: typed(t), ...bound('maxProperties', max) }, r);
const mapOfCustom =
  (item: CelSchema, r: string): Gen =>
  (max) =>
    rule({ type: 'object', additionalProperties: item, ...bound('maxProperties', max) }, r);
const str =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'string', ...bound('maxLength', max) }, r);
const enumOf =
  (r: string, ...values: string[]): Gen =>
  (max) =>
    rule({ type: 'string', enum: values, ...bound('maxLength', max) }, r);
const bytes =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'string', format: 'byte', ...bound('maxLength', max) }, r);
const nestedSpec =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'object', additionalProperties: { type: 'string', ...bound('maxLength', max) }, ...bound('maxProperties', max) }, r);
const allMaxNested =
  (r: string): Gen =>
  (max) =>
    rule(
      {
        type: 'array',
        items: { type: 'object', additionalProperties: { ...twoStrings(), ...bound('maxProperties', max) }, ...bound('maxProperties', max) },
        ...bound('maxItems', max),
      },
      r,
    );
const oneMaxNested =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'array', items: { type: 'object', additionalProperties: twoStrings(), ...bound('maxProperties', max) } }, r);
const stringList =
  (r: string): Gen =>
  (max) =>
    rule({ type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string', ...bound('maxLength', max) }, ...bound('maxItems', max) } as CelSchema, r);

// [name, schema, calc cost (0: not checked), maxElements, set cost (0: not checked)]
const rows: [string, Gen, number, number, number][] = [
  ['number array with all', arrayOf('number', 'self.all(x, true)'), 4718591, 10, 32],
  ['string array with all', arrayOf('string', 'self.all(x, true)'), 3145727, 20, 62],
  ['boolean array with all', arrayOf('boolean', 'self.all(x, true)'), 1887437, 5, 17],
  ['array of number arrays with all', arrayOfArrays('number', 'self.all(x, true)'), 3145727, 100, 302],
  ['array of objects with all', arrayOfObjects('self.all(x, true)'), 555128, 50, 152],
  ['map of numbers with all', mapOf('number', 'self.all(x, true)'), 1348169, 10, 32],
  ['map of strings with all', mapOf('string', 'self.all(x, true)'), 1179647, 3, 11],
  ['map of booleans with all', mapOf('boolean', 'self.all(x, true)'), 943718, 100, 302],
  ['string with contains', str("self.contains('test')"), 314574, 10, 5],
  ['string with startsWith', str("self.startsWith('test')"), 2, 15, 2],
  ['string with endsWith', str("self.endsWith('test')"), 2, 30, 2],
  ['concat string', str('size(self + "hello") > size("hello")'), 314578, 4, 7],
  ['index of array with numbers', arrayOf('number', 'self[1] == 0.0'), 2, 5000, 2],
  ['index of array with strings', arrayOf('string', 'self[1] == self[1]'), 314577, 8, 314577],
  ['O(n^2) loop with numbers', arrayOf('number', 'self.all(x, self.all(y, true))'), 0, 10, 352],
  ['O(n^3) loop with numbers', arrayOf('number', 'self.all(x, self.all(y, self.all(z, true)))'), 0, 10, 3552],
  ['regex matches simple', str('self.matches("x")'), 314574, 50, 22],
  ['regex matches empty string', str('"".matches("(((((((((())))))))))[0-9]")'), 7, 10, 7],
  ['regex matches empty regex', str('self.matches("")'), 1, 100, 1],
  ['map of strings with value length', nestedSpec('self.all(x, x.contains(self[x]))'), 2752507, 10, 72],
  ['set array maxLength to zero', arrayOf('number', 'self[3] == 0.0'), 2, 0, 2],
  ['set map maxLength to zero', mapOf('number', 'self["x"] == 0.0'), 2, 0, 2],
  ['set string maxLength to zero', str('self == "x"'), 2, 0, 1],
  ['set bytes maxLength to zero', bytes('self == b"x"'), 2, 0, 1],
  ['set maxLength greater than estimated maxLength', arrayOf('number', 'self.all(x, x == 0.0)'), 6291454, 3 * 1024 * 2048, 25165826],
  ['nested types with root rule with all supporting maxLength', allMaxNested('self.all(x, x["y"].required == "z")'), 7340027, 10, 72],
  ['nested types with root rule with one supporting maxLength', oneMaxNested('self.all(x, x["y"].required == "z")'), 7340027, 10, 7340027],
  ['int-or-string array with all', arrayOf('int-or-string', 'self.all(x, true)'), 4718591, 10, 32],
  ['index of array with int-or-strings', arrayOf('int-or-string', 'self[0] == 5'), 3, 10, 3],
  ['index of array with booleans', arrayOf('boolean', 'self[0] == false'), 2, 25, 2],
  ['index of array of objects', arrayOfObjects('self[0] == null'), 2, 422, 2],
  ['index of array of array of numnbers', arrayOfArrays('number', 'self[0][0] == -1.0'), 3, 51, 3],
  ['array of number maps with all', arrayOfMaps('number', 'self.all(x, x.y == 25.2)'), 6291452, 12, 74],
  ['index of array of number maps', arrayOfMaps('number', 'self[0].x > 2.0'), 4, 3000, 4],
  ['duration array with all', arrayOf('duration', 'self.all(x, true)'), 2359295, 5, 17],
  ['index of duration array', arrayOf('duration', 'self[0].getHours() == 2'), 4, 525, 4],
  ['date array with all', arrayOf('date', 'self.all(x, true)'), 725936, 15, 47],
  ['index of date array', arrayOf('date', 'self[2].getDayOfMonth() == 13'), 4, 42, 4],
  ['date-time array with all', arrayOf('date-time', 'self.all(x, true)'), 428963, 25, 77],
  ['index of date-time array', arrayOf('date-time', 'self[2].getMinutes() == 45'), 4, 99, 4],
  ['map of int-or-strings with all', mapOf('int-or-string', 'self.all(x, true)'), 1348169, 15, 47],
  ['map of objects with all', mapOfCustom(twoStrings(), 'self.all(x, true)'), 428963, 20, 62],
  ['map of number maps with all', mapOfCustom({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), 1179647, 10, 32],
  ['map of number arrays with all', mapOfCustom({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), 1179647, 25, 77],
  ['map of durations with all', mapOf('duration', 'self.all(x, true)'), 1048577, 5, 17],
  ['map of dates with all', mapOf('date', 'self.all(x, true)'), 524288, 10, 32],
  ['map of date-times with all', mapOf('date-time', 'self.all(x, true)'), 349526, 25, 77],
  ['extended library regex find', str("self.find('[0-9]+') == ''"), 629147, 10, 11],
  ['extended library join', stringList("self.join(' ') == 'aa bb'"), 329853068905, 10, 43],
  ['extended library isSorted', stringList('self.isSorted() == true'), 329854432052, 10, 52],
  [
    'extended library replace',
    (max) =>
      rule(
        { type: 'object', properties: { str: { type: 'string', ...bound('maxLength', max) }, before: { type: 'string', maxLength: 2 }, after: { type: 'string', maxLength: 4 } } },
        "self.str.replace(self.before, self.after) == 'does not matter'",
      ),
    629154,
    4,
    12,
  ],
  [
    'extended library split',
    (max) =>
      rule({ type: 'object', properties: { str: { type: 'string', ...bound('maxLength', max) }, separator: { type: 'string', ...bound('maxLength', max) } } }, 'self.str.split(self.separator) == []'),
    629160,
    10,
    22,
  ],
  ['extended library lowerAscii', str("self.lowerAscii() == 'lower!'"), 314575, 10, 6],
  ['check cost of size call', mapOf('integer', 'oldSelf.size() == self.size()'), 5, 10, 5],
  ['check cost of timestamp comparison', mapOf('date-time', 'self["a"] == self["b"]'), 8, 7, 8],
  ['check cost of duration comparison', mapOf('duration', 'self["c"] == self["d"]'), 8, 42, 8],
  ['enums with maxLength equals to the longest possible value', enumOf("self.contains('A')", 'A', 'B', 'C', 'LongValue'), 2, 1000, 401],
  ['IntOrString type with quantity rule', (max) => rule({ 'x-kubernetes-int-or-string': true, ...bound('maxLength', max) }, 'isQuantity(self)'), 314574, 20, 9],
];

/** Rows that cannot match yet, by name, with why (none left). */
const SKIPS = new Map<string, string>([]);
const run = rows.filter((r) => !SKIPS.has(r[0]));

function costOf(s: CelSchema): number {
  const r = (s as { 'x-kubernetes-validations': { rule: string }[] })['x-kubernetes-validations'][0]!;
  const compiled = compileSchemaRule({ rule: r.rule }, s, 'x-kubernetes-validations[0]');
  if (!compiled.ok) throw new Error(compiled.errors.map((e) => e.detail).join('; '));
  return compiled.rule.cost;
}

describe("the static cost of a rule, as Kubernetes' TestCostEstimation expects it", () => {
  test.each(run.filter((r) => r[2] > 0))('%s (no bound)', (_name, gen, calc) => {
    expect(costOf(gen())).toBe(calc);
  });
  test.each(run.filter((r) => r[4] > 0))('%s (bound %#)', (_name, gen, _calc, max, set) => {
    expect(costOf(gen(max))).toBe(set);
  });
  test('every skip names a row of the table', () => {
    for (const name of SKIPS.keys()) expect(rows.map((r) => r[0])).toContain(name);
  });
  test.each(run.filter((r) => r[2] === 0))('%s (no bound): over the per-rule limit', (_name, gen) => {
    expect(costOf(gen())).toBeGreaterThan(10_000_000);
  });
});
