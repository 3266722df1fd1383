/**
 * Property names as a CRD's rules name them (src/cel/escaping.ts): the table of Kubernetes'
 * apiserver/pkg/cel/escaping_test.go, then rules on a schema with such properties, compiled and run.
 */
import { describe, expect, test } from 'vitest';
import { escapeProperty } from '../../src/cel/escaping.js';
import { compileSchemaRule, runSchemaRule, SchemaRuleScope, type CelSchema } from '../../src/cel/index.js';

describe('escapeProperty: Kubernetes escaping_test.go', () => {
  test.each<[string, string | undefined]>([
    ['a.a', 'a__dot__a'],
    ['a-a', 'a__dash__a'],
    ['a__a', 'a__underscores__a'],
    ['a.-/__a', 'a__dot____dash____slash____underscores__a'],
    ['a._a', 'a__dot___a'],
    ['a__.__a', 'a__underscores____dot____underscores__a'],
    ['a___a', 'a__underscores___a'],
    ['a____a', 'a__underscores____underscores__a'],
    ['a__dot__a', 'a__underscores__dot__underscores__a'],
    ['a__underscores__a', 'a__underscores__underscores__underscores__a'],
    ...['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'].map(
      (w): [string, string] => [w, `__${w}__`],
    ),
    ['@', undefined],
    ['1up', undefined],
    ['👑', undefined],
    ['', undefined],
    ['has', 'has'],
    ['matches', 'matches'],
    ['_if', '_if'],
    ['_anything', '_anything'],
  ])('%s → %s', (name, escaped) => {
    expect(escapeProperty(name)).toBe(escaped);
  });
});

const str: CelSchema = { type: 'string' };
const schema: CelSchema = {
  type: 'object',
  properties: { namespace: str, if: str, 'x-y': str, 'a.b/c': str, a__b: str, '@at': str, opt: str },
};
const value = { namespace: 'ns', if: 'i', 'x-y': 'd', 'a.b/c': 'p', a__b: 'u', '@at': 'z', opt: null };

function run(rule: string): unknown {
  const r = compileSchemaRule({ rule }, schema, 'spec.x-kubernetes-validations[0]');
  if (!r.ok) return r.errors.map((e) => e.detail);
  return runSchemaRule(r.rule, new SchemaRuleScope({ self: value }, schema), { remaining: 1e9, timeoutMs: 5000 });
}

describe('rules name escaped properties', () => {
  test.each<[string, unknown]>([
    ['self.__namespace__ == "ns"', true],
    ['self.__if__ == "i"', true],
    ['self.x__dash__y == "d"', true],
    ['self.a__dot__b__slash__c == "p"', true],
    ['self.a__underscores__b == "u"', true],
    ['has(self.__namespace__)', true],
    // A null property of an object with properties is absent, as in Kubernetes' unstructured values.
    ['has(self.opt)', false],
  ])('%s', (rule, want) => {
    expect(run(rule)).toBe(want);
  });

  // kube-apiserver 1.31+ (apiserver/pkg/cel/types.go FindStructFieldType, recognizeKeywordAsFieldName):
  //   if rt.recognizeKeywordAsFieldName && !found && celReservedSymbols.Has(fieldName) { f, found = st.Fields["__"+fieldName+"__"] }
  test.each<[string, unknown]>([
    ['self.namespace == "ns"', true],
    ['self.if == "i" && has(self.namespace) && self.namespace == self.__namespace__', true],
  ])('%s: a reserved word names its property as itself too', (rule, want) => {
    expect(run(rule)).toBe(want);
  });

  test.each(['self.x_y == "d"', 'self.a__b == "u"', 'self.true == "t"'])('%s: the unescaped name is an undefined field (or no field name at all)', (rule) => {
    expect(String(run(rule))).toMatch(/undefined field|Expected IDENTIFIER/);
  });

  test('a property with no CEL name is out of reach, not a crash', () => {
    expect(String(run('self.__at__ == "z"'))).toMatch(/undefined field '__at__'/);
  });
});
