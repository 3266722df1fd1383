import { describe, expect, it } from 'vitest';
import { FieldPath } from '../../src/api/field-errors.js';
import { labelSelectorHasInvalidValue, validateLabelSelector } from '../../src/resources/labels.js';
import { pairs, type Expected } from './fixtures.js';

const P = 'sel';
const check = (sel: unknown, allow = false) => pairs(validateLabelSelector(sel, FieldPath.root(P), { allowInvalidLabelValueInSelector: allow }));

describe('label selectors', () => {
  const rows: [string, unknown, Expected][] = [
    ['an empty selector', {}, []],
    ['matchLabels', { matchLabels: { app: 'web' } }, []],
    ['matchLabels keys', { matchLabels: { 'a b': 'web' } }, [['FieldValueInvalid', `${P}.matchLabels`]]],
    ['matchLabels values', { matchLabels: { app: '-web' } }, [['FieldValueInvalid', `${P}.matchLabels`]]],
    ['In with values', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }, []],
    ['In needs values', { matchExpressions: [{ key: 'tier', operator: 'In' }] }, [['FieldValueRequired', `${P}.matchExpressions[0].values`]]],
    ['NotIn needs values', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: [] }] }, [['FieldValueRequired', `${P}.matchExpressions[0].values`]]],
    ['Exists takes no values', { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['a'] }] }, [['FieldValueForbidden', `${P}.matchExpressions[0].values`]]],
    ['DoesNotExist without values', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, []],
    ['unknown operator', { matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] }, [['FieldValueInvalid', `${P}.matchExpressions[0].operator`]]],
    [
      'key is a qualified name',
      { matchExpressions: [{ key: '', operator: 'Exists' }] },
      [
        ['FieldValueInvalid', `${P}.matchExpressions[0].key`],
        ['FieldValueInvalid', `${P}.matchExpressions[0].key`],
      ],
    ],
    ['values are label values', { matchExpressions: [{ key: 'k', operator: 'In', values: ['ok', 'not ok'] }] }, [['FieldValueInvalid', `${P}.matchExpressions[0].values[1]`]]],
  ];
  it.each(rows)('%s', (_n, sel, want) => expect(check(sel)).toEqual(want));

  it('an update may keep values that were already invalid', () => {
    const sel = { matchExpressions: [{ key: 'k', operator: 'In', values: ['not ok'] }] };
    expect(labelSelectorHasInvalidValue(sel)).toBe(true);
    expect(check(sel, true)).toEqual([]);
  });
});
