/** cel-go's literal validators as Kubernetes enables them (src/cel/literal-checks.ts). */
import { expect, test } from 'vitest';
import { compileSchemaRule, type CelSchema } from '../../src/cel/index.js';

const schema: CelSchema = { type: 'object', properties: { n: { type: 'integer' }, s: { 'x-kubernetes-int-or-string': true } } };
const compile = (rule: string) => {
  const r = compileSchemaRule({ rule }, schema, 'x-kubernetes-validations[0]');
  return r.ok ? 'ok' : r.errors.map((e) => e.detail).join('\n');
};

test.each([
  ["duration('1') > duration('0s')", 'compilation failed: ERROR: <input>:1:10: invalid duration argument'],
  ["timestamp('2020-13-01T00:00:00Z') > timestamp(0)", 'compilation failed: ERROR: <input>:1:11: invalid timestamp argument'],
  ["[1, 'a'].size() == 2", "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'"],
  ["{'a': 1, 'b': true}.size() == 2", "compilation failed: ERROR: <input>:1:15: expected type 'int' but found 'bool'"],
])('%s does not compile', (rule, text) => {
  expect(compile(rule)).toContain(text);
});

test.each(["'%s is %d'.format(['n', self.n]) != ''", "[self.s, 'a'].size() == 2", "duration('1h2m') > duration('0s') && timestamp('2020-01-01T00:00:00Z') > timestamp(0)", '[1, 2, 3].size() == 3'])(
  '%s compiles (string.format arguments, dyn elements and good literals are left alone)',
  (rule) => {
    expect(compile(rule)).toBe('ok');
  },
);
