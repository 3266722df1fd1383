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
