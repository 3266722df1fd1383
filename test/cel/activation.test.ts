/**
 * Activations of one request share their converted values: the object is converted once however
 * many policies read it, and each still sees it typed by its own schema.
 */
import { describe, expect, test } from 'vitest';
import { Activation, ConvertedValues, PolicyCompiler, type CelSchema } from '../../src/cel/index.js';

const request = {
  kind: { group: '', version: 'v1', kind: 'Thing' },
  resource: { group: '', version: 'v1', resource: 'things' },
  operation: 'CREATE' as const,
  userInfo: { username: 'u', groups: [] },
};
const intSchema: CelSchema = { type: 'object', properties: { n: { type: 'integer' } } };
const numberSchema: CelSchema = { type: 'object', properties: { n: { type: 'number' } } };

describe('shared conversions', () => {
  test('two activations of one request read the same converted object; without sharing each converts its own', () => {
    const object = { n: 2 };
    const converted = new ConvertedValues();
    const a = new Activation({ object, oldObject: null, request }, { schemas: { object: intSchema }, converted });
    const b = new Activation({ object, oldObject: null, request }, { schemas: { object: intSchema }, converted });
    expect(a.context.object).toBe(b.context.object);
    const c = new Activation({ object, oldObject: null, request }, { schemas: { object: intSchema } });
    expect(c.context.object).not.toBe(a.context.object);
    expect(c.context.object).toEqual(a.context.object);
  });

  test('a different schema converts again: an integer field is an int for one policy and a double for another', () => {
    const object = { n: 2 };
    const converted = new ConvertedValues();
    const check = (schema: CelSchema, expression: string) => {
      const r = new PolicyCompiler({ kind: 'validating', schemas: { object: schema } }).compile(expression, { fieldPath: 'spec.validations[0].expression' });
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      return r.program.evaluate(new Activation({ object, oldObject: null, request }, { schemas: { object: schema }, converted }));
    };
    expect(check(intSchema, 'object.n + 1 == 3')).toBe(true);
    expect(check(numberSchema, 'object.n + 1.5 == 3.5')).toBe(true);
  });
});
