/**
 * has() as cel-go's (src/cel/has-macro.ts): a selection from any expression, type-checked like the
 * selection. The first block pins @marcbachmann/cel-js's own has(), which the wrapper exists for:
 * when it starts passing cel-go's cases, the wrapper can go (and the change was offered upstream).
 */
import { describe, expect, test } from 'vitest';
import { Environment } from '@marcbachmann/cel-js';
import { compileSchemaRule, runSchemaRule, SchemaRuleScope, type CelSchema } from '../../src/cel/index.js';

describe("the library's own has() (pinned: remove has-macro.ts when these change)", () => {
  const env = new Environment({ unlistedVariablesAreDyn: true });
  test('refuses a selection from an index or a map key', () => {
    for (const e of ['has(x[0].f)', "has(x['k'].f)"]) expect(env.check(e).error?.message).toMatch(/has\(\) invalid argument/);
  });
  test('does not check the field against a declared type', () => {
    const typed = new Environment().registerType('Thing', { fields: { a: 'string' } }).registerVariable('t', 'Thing');
    expect(typed.check('has(t.nope)').valid).toBe(true);
  });
});

const item: CelSchema = { type: 'object', properties: { path: { type: 'string' }, matches: { type: 'array', items: { type: 'string' } } } };
const schema: CelSchema = {
  type: 'object',
  properties: {
    rules: { type: 'array', items: item },
    m: { type: 'object', additionalProperties: item },
    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};
const value = { rules: [{ path: '/a' }, { matches: ['x'] }], m: { k: { path: '/b' } }, free: { any: 1 } };

function run(rule: string, s: CelSchema = schema, v: unknown = value): unknown {
  const r = compileSchemaRule({ rule }, s, 'spec.x-kubernetes-validations[0]');
  if (!r.ok) return r.errors.map((e) => e.detail).join('\n');
  return runSchemaRule(r.rule, new SchemaRuleScope({ self: v }, s), { remaining: 1e9, timeoutMs: 5000 });
}

describe('has() in a CRD rule', () => {
  test.each<[string, boolean]>([
    ['has(self.rules[0].path)', true],
    ['has(self.rules[0].matches)', false],
    ['has(self.rules[1].matches)', true],
    ["has(self.m['k'].path)", true],
    ["has(self.m['k'].matches)", false],
    ['self.rules.all(r, has(r.path) || has(r.matches))', true],
    ['has(self.free.any)', true],
    ['has(self.free.other)', false],
    ['has(self.rules)', true],
  ])('%s is %s', (rule, want) => {
    expect(run(rule)).toBe(want);
  });

  test('on a list item of the root', () => {
    expect(run('has(self[0].matches)', { type: 'array', items: item }, [{ matches: [] }])).toBe(true);
  });

  test.each(['has(self.nope)', 'has(self.rules[0].nope)', "has(self.m['k'].nope)"])('%s: a field the schema does not declare is a compile error', (rule) => {
    expect(run(rule)).toMatch(/undefined field 'nope'/);
  });

  test('an argument that is no selection is refused in cel-go words', () => {
    expect(run('has(self)')).toMatch(/invalid argument to has\(\) macro/);
  });

  test('a missing element is an evaluation error, as in cel-go', () => {
    expect(() => run('has(self.rules[5].path)')).toThrow();
  });
});
