import { describe, expect, it } from 'vitest';
import { checkName, isCELIdentifier, isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isFullyQualifiedName, isLabelValue, isPathSegmentName, isQualifiedName } from '../../src/api/name-formats.js';

const ok = (errs: string[]) => errs.length === 0;

describe('name formats', () => {
  it.each([
    ['DNS-1123 label', isDNS1123Label, ['a', 'my-name', '123-abc', 'a'.repeat(63)], ['', 'A', '-a', 'a-', 'a.b', 'a_b', 'a'.repeat(64)]],
    ['DNS-1123 subdomain', isDNS1123Subdomain, ['a', 'example.com', 'a-b.c-d', `${'a'.repeat(63)}.b`], ['', 'Example.com', 'a..b', '.a', 'a.', 'a_b', 'a'.repeat(254)]],
    ['DNS-1035 label', isDNS1035Label, ['v1', 'v1beta1', 'abc-123'], ['1v', 'V1', 'a-', '']],
    ['qualified name', isQualifiedName, ['MyName', 'my.name', '123-abc', 'example.com/MyName', 'a_b'], ['', '-a', 'a/', '/a', 'a/b/c', 'Ex.com/a', 'a b', `x/${'a'.repeat(64)}`]],
    ['label value', isLabelValue, ['', 'MyValue', 'my_value', '12345', 'a.b-c'], ['-a', 'a b', 'a/b', 'v'.repeat(64)]],
    ['path segment name', isPathSegmentName, ['a', 'A_b', '...'], ['.', '..', 'a/b', 'a%2F']],
    ['fully qualified name', isFullyQualifiedName, ['a.b.c', 'inject.sidecar.example.com'], ['a.b', 'A.b.c', 'a..c']],
  ] as const)('%s', (_n, check, good, bad) => {
    for (const v of good) expect(ok(check(v)), `${JSON.stringify(v)} should pass`).toBe(true);
    for (const v of bad) expect(ok(check(v)), `${JSON.stringify(v)} should fail`).toBe(false);
  });

  it('words messages as Kubernetes does', () => {
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isQualifiedName('')).toEqual([
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
  });

  it('checks a generateName as a prefix: a trailing dash is fine', () => {
    expect(checkName('dns-subdomain', 'web-', true)).toEqual([]);
    expect(ok(checkName('dns-subdomain', 'web-', false))).toBe(false);
    expect(checkName('dns-label', 'team-', true)).toEqual([]);
  });

  it.each([
    ['x', true],
    ['_x1', true],
    ['1x', false],
    ['my-var', false],
    ['in', false],
    ['namespace', false],
    ['variables', true],
  ])('CEL identifier %s', (name, want) => expect(isCELIdentifier(name)).toBe(want));
});
