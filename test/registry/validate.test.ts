/** What a write is validated with (src/registry/validate.ts): object metadata, then the kind's own rules, in one list. */
import { describe, expect, it } from 'vitest';
import { validateCreate, validateUpdate } from '../../src/registry/validate.js';
import { kinds } from '../../src/resources/kinds.js';
import { roleIn } from '../helpers/registry.js';

const role = kinds.find((k) => k.kind === 'Role')!;
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

describe('validateCreate', () => {
  it('reports metadata and kind errors together', () => {
    const o = roleIn('a/b', 'dev');
    o.rules = [{ apiGroups: [''], resources: ['events'] }];
    expect(fields(validateCreate(role, o))).toEqual(['metadata.name', 'rules[0].verbs']);
  });

  it('a valid object has none', () => {
    expect(validateCreate(role, roleIn('ok', 'dev'))).toEqual([]);
  });
});

describe('validateUpdate', () => {
  it('adds the transition rules: a changed uid or namespace is refused', () => {
    const old = { ...roleIn('ok', 'dev'), metadata: { name: 'ok', namespace: 'dev', uid: 'u-1', resourceVersion: '3' } };
    const next = { ...old, metadata: { ...old.metadata, uid: 'u-2' } };
    expect(fields(validateUpdate(role, next, old))).toEqual(['metadata.uid']);
    expect(validateUpdate(role, old, old)).toEqual([]);
  });
});
