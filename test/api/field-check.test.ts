import { describe, expect, it } from 'vitest';
import { checkFields } from '../../src/api/field-check.js';
import type { Schema } from '../../src/api/schema.js';

/*
 * The type check and the unknown-field check share one walk but descend by their own rules: the
 * type check stops at null and at a value of the wrong type, the unknown-field check goes on into it
 * (and into lists whatever their declared type); it stops under x-kubernetes-preserve-unknown-fields,
 * where the type check goes on.
 */
const schema: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', format: 'int32' },
        tags: { type: 'object', additionalProperties: { type: 'object', properties: { on: { type: 'boolean' } } } },
        rules: { type: 'array', items: { type: 'object', properties: { expression: { type: 'string' } } } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { n: { type: 'number' } } },
        notAList: { type: 'string', items: { type: 'object', properties: { a: { type: 'string' } } } },
      },
    },
  },
};

const ALL = { types: true, unknown: true, prune: true };

describe('checkFields', () => {
  it('finds type errors and unknown fields in one walk, each in document order, with their paths', () => {
    const body = {
      spec: {
        size: 2 ** 31,
        bogus: 1,
        tags: { a: { on: 'yes', extra: true }, 'b.c': null },
        rules: [{ expression: 1 }, { expression: 'x', why: 'no' }, null],
        free: { n: 'one', anything: { goes: true } },
        notAList: [{ a: 'ok', b: 'unknown' }],
      },
    };
    const found = checkFields(body, schema, ALL);
    expect(found.typeErrors.map((e) => [e.field, e.detail])).toEqual([
      ['spec.size', 'must fit in a 32-bit integer'],
      ['spec.tags[a].on', 'must be of type boolean'],
      ['spec.rules[0].expression', 'must be of type string'],
      ['spec.free.n', 'must be of type number'],
      ['spec.notAList', 'must be of type string'],
    ]);
    expect(found.unknown.map((u) => u.path)).toEqual(['spec.bogus', 'spec.tags[a].extra', 'spec.rules[1].why', 'spec.notAList[0].b']);
    // Pruned in place; what the preserve-unknown-fields object holds stays.
    expect(body.spec).not.toHaveProperty('bogus');
    expect(body.spec.tags.a).toEqual({ on: 'yes' });
    expect(body.spec.free.anything).toEqual({ goes: true });
  });

  it('reports a value of the wrong type once, and nothing inside it that its schema cannot name', () => {
    const body = { spec: { rules: { expression: 'x', stray: 1 }, tags: [{ on: true, stray: 2 }] } };
    const found = checkFields(body, schema, { types: true, unknown: true, prune: false });
    expect(found.typeErrors.map((e) => [e.field, e.value, e.detail])).toEqual([
      ['spec.rules', 'object', 'must be of type array'],
      ['spec.tags', 'array', 'must be of type object'],
    ]);
    // A list's schema declares no fields for an object's keys; a map's none for a list's items.
    expect(found.unknown).toEqual([]);
  });

  it('checks only what it is asked to', () => {
    const body = { spec: { size: 'big', bogus: 1 } };
    expect(checkFields(body, schema, { types: true, unknown: false, prune: false })).toEqual({ typeErrors: [expect.objectContaining({ field: 'spec.size' })], unknown: [] });
    expect(checkFields(body, schema, { types: false, unknown: true, prune: false })).toEqual({ typeErrors: [], unknown: [{ path: 'spec.bogus', kind: 'unknown' }] });
  });
});
