import { describe, expect, it } from 'vitest';
import { compileFieldSelector, parseFieldSelector } from '../../src/selectors/field-selector.js';
import { SelectorError } from '../../src/selectors/label-selector.js';

type O = { name: string; ns: string };
const fields = { 'metadata.name': (o: O) => o.name, 'metadata.namespace': (o: O) => o.ns };
const match = (sel: string, o: O) => compileFieldSelector(parseFieldSelector(sel), fields)(o);

describe('field selector', () => {
  it.each([
    ['=', 'metadata.name=a', true],
    ['==', 'metadata.name==a', true],
    ['!=', 'metadata.name!=a', false],
    ['AND', 'metadata.name=a,metadata.namespace=x', true],
    ['AND failing', 'metadata.name=a,metadata.namespace=y', false],
    ['escaped comma', 'metadata.name=a\\,b', false],
    ['empty', '', true],
  ])('%s: %s', (_n, sel, want) => {
    expect(match(sel, { name: 'a', ns: 'x' })).toBe(want);
  });

  it('unescapes values', () => {
    expect(parseFieldSelector('metadata.name=a\\,b\\=c')).toEqual([{ field: 'metadata.name', op: '=', value: 'a,b=c' }]);
  });

  it('names an unsupported field', () => {
    expect(() => compileFieldSelector(parseFieldSelector('spec.foo=x'), fields)).toThrow('field label not supported: spec.foo');
  });

  it.each(['metadata.name', '=x', 'metadata.name=a=b'])('rejects %s', (sel) => {
    expect(() => parseFieldSelector(sel)).toThrow(SelectorError);
  });
});
