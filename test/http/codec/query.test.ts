import { describe, expect, it } from 'vitest';
import { createOptions, flag, getOptions, includeObject, listOptions, parseGoBool, parseResourceVersion, patchOptions, pretty, updateOptions } from '../../../src/http/codec/query.js';
import { deleteCollectionOptions, deleteOptionsFrom } from '../../../src/http/codec/delete-options.js';
import { ApiError } from '../../../src/http/respond/status.js';

const q = (text: string) => new URLSearchParams(text);

interface Failure {
  code: number;
  reason?: string;
  message: string;
  causes?: { reason?: string; field?: string }[];
}

function failure(fn: () => unknown): Failure {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, reason: err.status.reason, message: err.message, causes: err.status.details?.causes?.map((c) => ({ reason: c.reason, field: c.field })) };
  }
  throw new Error('expected a failure');
}

describe('booleans read as kube-apiserver reads them', () => {
  const cases: [string, string, boolean | undefined][] = [
    ['absent', '', undefined],
    ['true', 'watch=true', true],
    ['python capitalises', 'watch=True', true],
    ['1', 'watch=1', true],
    ['a bare parameter', 'watch', true],
    ['an empty value', 'watch=', true],
    ['any other word', 'watch=yes', true],
    ['false', 'watch=false', false],
    ['False', 'watch=False', false],
    ['any casing of false', 'watch=fAlSe', false],
    ['0', 'watch=0', false],
    ['the first of repeated values', 'watch=false&watch=true', false],
  ];
  it.each(cases)('%s', (_name, query, want) => {
    expect(flag(q(query), 'watch')).toBe(want);
  });
});

describe("Go's strconv.ParseBool (for pretty)", () => {
  const cases: [string, boolean | undefined][] = [
    ['1', true],
    ['t', true],
    ['T', true],
    ['TRUE', true],
    ['true', true],
    ['True', true],
    ['0', false],
    ['f', false],
    ['F', false],
    ['FALSE', false],
    ['false', false],
    ['False', false],
    ['tRUE', undefined],
    ['yes', undefined],
    ['', undefined],
  ];
  it.each(cases)('%s', (v, want) => {
    expect(parseGoBool(v)).toBe(want);
  });
});

describe('pretty', () => {
  const cases: [string, string, string | undefined, boolean][] = [
    ['off by default', '', 'kubectl/v1.33.1 (linux/amd64)', false],
    ['on when asked', 'pretty=true', undefined, true],
    ['ParseBool words', 'pretty=T', undefined, true],
    ['off when asked, even for curl', 'pretty=false', 'curl/8.5.0', false],
    ['junk is off, not an error', 'pretty=yes', 'curl/8.5.0', false],
    ['an empty value defers to the user agent', 'pretty=', 'curl/8.5.0', true],
    ['on for curl', '', 'curl/8.5.0', true],
    ['on for Wget', '', 'Wget/1.21', true],
    ['on for browsers', '', 'Mozilla/5.0 (X11; Linux x86_64)', true],
    ['not for node-fetch', '', 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', false],
    ['not for python', '', 'OpenAPI-Generator/22.6.0/python', false],
  ];
  it.each(cases)('%s', (_name, query, ua, want) => {
    expect(pretty(q(query), ua)).toBe(want);
  });
});

describe('includeObject', () => {
  const cases: [string, string, string][] = [
    ['Metadata by default', '', 'Metadata'],
    ['empty is the default', 'includeObject=', 'Metadata'],
    ['None', 'includeObject=None', 'None'],
    ['Object', 'includeObject=Object', 'Object'],
  ];
  it.each(cases)('%s', (_name, query, want) => {
    expect(includeObject(q(query))).toBe(want);
  });
  it('anything else is a 400 worded as Kubernetes words it', () => {
    expect(failure(() => includeObject(q('includeObject=all')))).toMatchObject({
      code: 400,
      message: `Unable to convert to Table as requested: includeObject: Invalid value: "all": must be 'Metadata', 'Object', 'None', or empty`,
    });
  });
});

describe('integers', () => {
  const junk: [string, string, string][] = [
    ['a word', 'limit=abc', 'limit: strconv.ParseInt: parsing "abc": invalid syntax'],
    ['a fraction', 'limit=1.5', 'limit: strconv.ParseInt: parsing "1.5": invalid syntax'],
    ['an empty value', 'timeoutSeconds=', 'timeoutSeconds: strconv.ParseInt: parsing "": invalid syntax'],
    ['spaces', 'limit=%201', 'limit: strconv.ParseInt: parsing " 1": invalid syntax'],
    ['past int64', 'limit=9223372036854775808', 'limit: strconv.ParseInt: parsing "9223372036854775808": value out of range'],
    ['a negative timeout', 'timeoutSeconds=-1', 'timeoutSeconds: must be greater than or equal to 0'],
  ];
  it.each(junk)('400 naming the parameter for %s', (_name, query, message) => {
    expect(failure(() => listOptions(q(query)))).toMatchObject({ code: 400, reason: 'BadRequest', message });
  });
  it('400 for a junk gracePeriodSeconds', () => {
    expect(failure(() => deleteOptionsFrom(q('gracePeriodSeconds=soon'), undefined))).toMatchObject({ code: 400, message: 'gracePeriodSeconds: strconv.ParseInt: parsing "soon": invalid syntax' });
  });
  const values: [string, string, number | undefined][] = [
    ['a plain limit', 'limit=500', 500],
    ['a signed limit', 'limit=%2B7', 7],
    ['zero means no limit', 'limit=0', undefined],
    ['a negative limit means no limit, as in Kubernetes', 'limit=-5', undefined],
  ];
  it.each(values)('%s', (_name, query, want) => {
    expect(listOptions(q(query)).limit).toBe(want);
  });
});

describe('resourceVersion', () => {
  const cases: [string, string | undefined, number][] = [
    ['unset is 0', undefined, 0],
    ['empty is 0', '', 0],
    ['"0" is 0', '0', 0],
    ['a sequence', '42', 42],
  ];
  it.each(cases)('%s', (_name, rv, want) => {
    expect(parseResourceVersion(rv)).toBe(want);
  });
  it.each([
    ['a word', 'abc', 'invalid syntax'],
    ['a negative number', '-1', 'invalid syntax'],
    ['past uint64', '18446744073709551616', 'value out of range'],
  ])('400 for %s', (_name, rv, why) => {
    expect(failure(() => parseResourceVersion(rv))).toMatchObject({
      code: 400,
      message: `invalid resource version: resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": ${why}`,
    });
  });
  it('is checked by list, watch and get', () => {
    expect(failure(() => listOptions(q('resourceVersion=x')))).toMatchObject({ code: 400 });
    expect(failure(() => listOptions(q('watch=1&resourceVersion=x')))).toMatchObject({ code: 400 });
    expect(failure(() => getOptions(q('resourceVersion=x')))).toMatchObject({ code: 400 });
  });
});

describe('listOptions for a list', () => {
  it('carries what kubectl get sends', () => {
    expect(listOptions(q('limit=500'))).toEqual({ watch: false, allowWatchBookmarks: false, sendInitialEvents: false, limit: 500 });
  });
  it('carries selectors, continue and the version as strings', () => {
    expect(listOptions(q('labelSelector=a%3Db&fieldSelector=metadata.name%3Dx&shardSelector=x&continue=tok&resourceVersion=0&timeoutSeconds=30'))).toEqual({
      watch: false,
      allowWatchBookmarks: false,
      sendInitialEvents: false,
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=x',
      shardSelector: 'x',
      continue: 'tok',
      resourceVersion: '0',
      timeoutSeconds: 30,
    });
  });
  it('treats empty strings as unset', () => {
    expect(listOptions(q('labelSelector=&continue=&resourceVersion='))).toEqual({ watch: false, allowWatchBookmarks: false, sendInitialEvents: false });
  });
  it('takes Exact with a version', () => {
    expect(listOptions(q('resourceVersion=7&resourceVersionMatch=Exact')).resourceVersionMatch).toBe('Exact');
  });
  it('takes NotOlderThan with a version', () => {
    expect(listOptions(q('resourceVersion=7&resourceVersionMatch=NotOlderThan')).resourceVersionMatch).toBe('NotOlderThan');
  });

  const invalid: [string, string, string, [string, string][]][] = [
    [
      'a match needs a version',
      'resourceVersionMatch=Exact',
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      [['FieldValueForbidden', 'resourceVersionMatch']],
    ],
    [
      'a match cannot go with continue',
      'resourceVersion=0&resourceVersionMatch=NotOlderThan&continue=tok',
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
      [['FieldValueForbidden', 'resourceVersionMatch']],
    ],
    [
      'an unknown match',
      'resourceVersion=7&resourceVersionMatch=Newest',
      'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      [['FieldValueNotSupported', 'resourceVersionMatch']],
    ],
    [
      'Exact at "0"',
      'resourceVersion=0&resourceVersionMatch=Exact',
      'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      [['FieldValueForbidden', 'resourceVersionMatch']],
    ],
    ['sendInitialEvents on a list', 'sendInitialEvents=true', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list', [['FieldValueForbidden', 'sendInitialEvents']]],
  ];
  it.each(invalid)('422 Invalid: %s', (_name, query, message, causes) => {
    const f = failure(() => listOptions(q(query)));
    expect(f).toMatchObject({ code: 422, reason: 'Invalid', message: `ListOptions.meta.k8s.io "" is invalid: ${message}` });
    expect(f.causes).toEqual(causes.map(([reason, field]) => ({ reason, field })));
  });
  it('reports every broken rule at once', () => {
    expect(failure(() => listOptions(q('resourceVersionMatch=Newest&continue=tok&sendInitialEvents=false'))).causes).toHaveLength(4);
  });
  it('400 for a version with continue, as the storage layer answers', () => {
    expect(failure(() => listOptions(q('continue=tok&resourceVersion=5')))).toMatchObject({ code: 400, message: 'specifying resource version is not allowed when using continue' });
  });
  it('takes continue with resourceVersion "0"', () => {
    expect(listOptions(q('continue=tok&resourceVersion=0')).continue).toBe('tok');
  });
});

describe('listOptions for a watch', () => {
  const cases: [string, string, { watch?: boolean }, Partial<Record<string, unknown>>][] = [
    ['kubectl get -w: a plain watch from the list version', 'resourceVersion=42&watch=true', {}, { watch: true, resourceVersion: '42', sendInitialEvents: false }],
    ['python: capitalised booleans', 'allowWatchBookmarks=True&resourceVersion=42&watch=True', {}, { watch: true, allowWatchBookmarks: true, sendInitialEvents: false }],
    ['a watch with no version defaults to initial events', 'watch=1', {}, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }],
    ['a watch from "0" defaults to initial events', 'watch=1&resourceVersion=0', {}, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }],
    [
      'explicit initial events with NotOlderThan',
      'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=9',
      {},
      { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' },
    ],
    ['explicitly no initial events', 'watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan', {}, { sendInitialEvents: false, resourceVersionMatch: 'NotOlderThan' }],
    ['the /watch/ paths force a watch', 'resourceVersion=3', { watch: true }, { watch: true, sendInitialEvents: false }],
    ['bookmarks are off unless asked', 'watch=true&resourceVersion=3', {}, { allowWatchBookmarks: false }],
    ['the timeout is carried', 'watch=true&resourceVersion=3&timeoutSeconds=300', {}, { timeoutSeconds: 300 }],
  ];
  it.each(cases)('%s', (_name, query, force, want) => {
    expect(listOptions(q(query), force)).toMatchObject(want);
  });
  it('watch=false is a list', () => {
    expect(listOptions(q('watch=false')).watch).toBe(false);
  });

  const invalid: [string, string, string][] = [
    ['initial events without a match', 'watch=1&sendInitialEvents=true&resourceVersion=5', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
    [
      'a match without initial events (not defaulted)',
      'watch=1&resourceVersionMatch=NotOlderThan',
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    ],
    [
      'a match with continue',
      'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=t',
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    ],
    // The spec: continue is "unsupported with watch" (issue 18).
    ['continue on a watch', 'watch=true&resourceVersion=5&continue=t', 'continue: Forbidden: continue is forbidden for watch'],
    ['continue on a watch from now', 'watch=true&continue=t', 'continue: Forbidden: continue is forbidden for watch'],
  ];
  it.each(invalid)('422 Invalid: %s', (_name, query, message) => {
    expect(failure(() => listOptions(q(query)))).toMatchObject({ code: 422, reason: 'Invalid', message: `ListOptions.meta.k8s.io "" is invalid: ${message}` });
  });
  it('422 Invalid: initial events with Exact, which a watch does not support at all', () => {
    expect(failure(() => listOptions(q('watch=1&sendInitialEvents=true&resourceVersion=5&resourceVersionMatch=Exact'))).message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, ' +
        'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
  });
});

describe('getOptions', () => {
  it('carries the version', () => {
    expect(getOptions(q('resourceVersion=5'))).toEqual({ resourceVersion: '5' });
  });
  it('reads Exact (orchd reads objects in the past)', () => {
    expect(getOptions(q('resourceVersion=5&resourceVersionMatch=Exact'))).toEqual({ resourceVersion: '5', resourceVersionMatch: 'Exact' });
  });
  it('422 for a match without a version', () => {
    expect(failure(() => getOptions(q('resourceVersionMatch=Exact')))).toMatchObject({
      code: 422,
      message: expect.stringMatching(/^GetOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden/),
    });
  });
});

describe('create and update options', () => {
  it('defaults fieldValidation to Warn', () => {
    expect(createOptions(q(''))).toEqual({ dryRun: false, fieldValidation: 'Warn' });
  });
  it('reads what kubectl create sends', () => {
    expect(createOptions(q('fieldManager=kubectl-create&fieldValidation=Strict&dryRun=All'))).toEqual({ dryRun: true, fieldManager: 'kubectl-create', fieldValidation: 'Strict' });
  });
  it.each(['Ignore', 'Warn', 'Strict'])('takes fieldValidation=%s', (v) => {
    expect(updateOptions(q(`fieldValidation=${v}`)).fieldValidation).toBe(v);
  });
  it('treats an empty fieldValidation as the default', () => {
    expect(updateOptions(q('fieldValidation=')).fieldValidation).toBe('Warn');
  });
  it('takes a repeated dryRun=All', () => {
    expect(createOptions(q('dryRun=All&dryRun=All')).dryRun).toBe(true);
  });
  it('takes a fieldManager of exactly 128 bytes', () => {
    expect(createOptions(q(`fieldManager=${'m'.repeat(128)}`)).fieldManager).toHaveLength(128);
  });
  it('takes printable non-ASCII and spaces in a fieldManager', () => {
    expect(createOptions(q('fieldManager=%C3%A9t%C3%A9 manager')).fieldManager).toBe('été manager');
  });

  const invalid: [string, string, string][] = [
    ['an unknown dryRun value', 'dryRun=Yes', 'dryRun: Unsupported value: ["Yes"]: supported values: "All"'],
    ['an empty dryRun value', 'dryRun=', 'dryRun: Unsupported value: [""]: supported values: "All"'],
    ['All mixed with another value', 'dryRun=All&dryRun=None', 'dryRun: Unsupported value: ["All","None"]: supported values: "All"'],
    ['an unknown fieldValidation', 'fieldValidation=strict', 'fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"'],
    ['a fieldManager over 128 bytes', `fieldManager=${'m'.repeat(129)}`, 'fieldManager: Too long: may not be more than 128 bytes'],
    ['a fieldManager over 128 bytes though under 128 characters', `fieldManager=${'%C3%A9'.repeat(65)}`, 'fieldManager: Too long: may not be more than 128 bytes'],
    // The value as %q prints it (apimachinery field/errors.go ErrorBody: case string: fmt.Sprintf("%s: %q", …)): \a, \u00a0.
    ['a control character in a fieldManager', 'fieldManager=a%07b', 'fieldManager: Invalid value: "a\\ab": invalid character U+0007 (at position 1)'],
    ['a non-ASCII space in a fieldManager, at its byte position', 'fieldManager=%C3%A9%C2%A0', 'fieldManager: Invalid value: "é\\u00a0": invalid character U+00A0 (at position 2)'],
  ];
  it.each(invalid)('422 CreateOptions Invalid: %s', (_name, query, message) => {
    expect(failure(() => createOptions(q(query)))).toMatchObject({ code: 422, reason: 'Invalid', message: `CreateOptions.meta.k8s.io "" is invalid: ${message}` });
  });
  it('names UpdateOptions on update', () => {
    expect(failure(() => updateOptions(q('dryRun=x'))).message).toMatch(/^UpdateOptions.meta.k8s.io "" is invalid: dryRun/);
  });
});

describe('patchOptions', () => {
  const APPLY = 'application/apply-patch+yaml';
  const MERGE = 'application/merge-patch+json';
  it('reads what kubectl apply --server-side sends', () => {
    expect(patchOptions(q('fieldManager=kubectl&fieldValidation=Strict&force=false'), APPLY)).toEqual({ dryRun: false, fieldManager: 'kubectl', fieldValidation: 'Strict', force: false });
  });
  it('reads force=true on apply', () => {
    expect(patchOptions(q('fieldManager=node-mgr&force=true'), APPLY).force).toBe(true);
  });
  it('takes a merge patch without a fieldManager', () => {
    expect(patchOptions(q(''), MERGE)).toEqual({ dryRun: false, fieldValidation: 'Warn', force: false });
  });
  const invalid: [string, string, string, string][] = [
    ['an apply patch without a fieldManager', '', APPLY, 'fieldManager: Required value: is required for apply patch'],
    ['an apply patch with an empty fieldManager', 'fieldManager=', APPLY, 'fieldManager: Required value: is required for apply patch'],
    ['force on a merge patch', 'force=true', MERGE, 'force: Forbidden: may not be specified for non-apply patch'],
    ['force=false on a JSON patch (set at all is too much)', 'force=false', 'application/json-patch+json', 'force: Forbidden: may not be specified for non-apply patch'],
    ['force on a strategic merge patch', 'force', 'application/strategic-merge-patch+json', 'force: Forbidden: may not be specified for non-apply patch'],
    ['a bad dryRun', 'fieldManager=m&dryRun=x', APPLY, 'dryRun: Unsupported value: ["x"]'],
  ];
  it.each(invalid)('422 PatchOptions Invalid: %s', (_name, query, type, message) => {
    expect(failure(() => patchOptions(q(query), type))).toMatchObject({ code: 422, message: expect.stringContaining(`PatchOptions.meta.k8s.io "" is invalid: ${message}`) });
  });
});

describe('deleteOptionsFrom', () => {
  const fromQuery: [string, string, unknown][] = [
    ['nothing', '', { dryRun: false }],
    ['a propagation policy', 'propagationPolicy=Foreground', { dryRun: false, propagationPolicy: 'Foreground' }],
    ['a grace period', 'gracePeriodSeconds=30', { dryRun: false, gracePeriodSeconds: 30 }],
    ['grace period 0 deletes at once', 'gracePeriodSeconds=0', { dryRun: false, gracePeriodSeconds: 0 }],
    ['orphanDependents', 'orphanDependents=false', { dryRun: false, orphanDependents: false }],
    ['dryRun', 'dryRun=All', { dryRun: true }],
    [
      'the unsafe-delete option (corrupt objects, encryption at rest)',
      'ignoreStoreReadErrorWithClusterBreakingPotential=true',
      { dryRun: false, ignoreStoreReadErrorWithClusterBreakingPotential: true },
    ],
    ['the unsafe-delete option off', 'ignoreStoreReadErrorWithClusterBreakingPotential=false', { dryRun: false }],
  ];
  it.each(fromQuery)('from the query: %s', (_name, query, want) => {
    expect(deleteOptionsFrom(q(query), undefined)).toEqual(want);
  });

  const fromBody: [string, unknown, unknown][] = [
    ['what kubectl delete sends', { propagationPolicy: 'Background' }, { dryRun: false, propagationPolicy: 'Background' }],
    [
      'kubectl delete --dry-run=server --grace-period=5',
      { propagationPolicy: 'Background', dryRun: ['All'], gracePeriodSeconds: 5 },
      { dryRun: true, propagationPolicy: 'Background', gracePeriodSeconds: 5 },
    ],
    ['preconditions', { preconditions: { uid: 'u-1', resourceVersion: '7' } }, { dryRun: false, preconditions: { uid: 'u-1', resourceVersion: '7' } }],
    ['typed as meta.k8s.io/v1 DeleteOptions', { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', orphanDependents: true }, { dryRun: false, orphanDependents: true }],
    ['typed as an older per-group DeleteOptions', { kind: 'DeleteOptions', apiVersion: 'admissionregistration.orch.io/v1' }, { dryRun: false }],
    ['nulls are unset', { gracePeriodSeconds: null, propagationPolicy: null, dryRun: null, preconditions: null, orphanDependents: null }, { dryRun: false }],
    ['unknown fields are ignored', { bogus: 1 }, { dryRun: false }],
    ['a JSON null body', null, { dryRun: false }],
  ];
  it.each(fromBody)('from the body: %s', (_name, body, want) => {
    expect(deleteOptionsFrom(q(''), body)).toEqual(want);
  });
  it('ignores the query entirely when there is a body, as Kubernetes does', () => {
    expect(deleteOptionsFrom(q('dryRun=All&gracePeriodSeconds=3&propagationPolicy=Orphan'), { propagationPolicy: 'Background' })).toEqual({ dryRun: false, propagationPolicy: 'Background' });
  });
  it('does not even parse the query when there is a body', () => {
    expect(deleteOptionsFrom(q('gracePeriodSeconds=junk'), {})).toEqual({ dryRun: false });
  });

  const invalid: [string, string, unknown, string, string][] = [
    [
      'both orphanDependents and propagationPolicy (query)',
      'orphanDependents=true&propagationPolicy=Orphan',
      undefined,
      'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
      'propagationPolicy',
    ],
    [
      'both orphanDependents and propagationPolicy (body)',
      '',
      { orphanDependents: false, propagationPolicy: 'Background' },
      'propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
      'propagationPolicy',
    ],
    [
      'an unknown propagation policy',
      'propagationPolicy=Later',
      undefined,
      'propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"',
      'propagationPolicy',
    ],
    ['a lower-case propagation policy', '', { propagationPolicy: 'background' }, 'propagationPolicy: Unsupported value: "background"', 'propagationPolicy'],
    ['a bad dryRun in the body', '', { dryRun: ['all'] }, 'dryRun: Unsupported value: ["all"]: supported values: "All"', 'dryRun'],
    // The spec: "Non-negative seconds before deletion" (issue 18; Kubernetes reads a negative one as 1s).
    ['a negative grace period (query)', 'gracePeriodSeconds=-5', undefined, 'gracePeriodSeconds: Invalid value: -5: must be greater than or equal to 0', 'gracePeriodSeconds'],
    ['a negative grace period (body)', '', { gracePeriodSeconds: -1 }, 'gracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0', 'gracePeriodSeconds'],
  ];
  it.each(invalid)('422 DeleteOptions Invalid: %s', (_name, query, body, message, field) => {
    const f = failure(() => deleteOptionsFrom(q(query), body));
    expect(f).toMatchObject({ code: 422, reason: 'Invalid', message: expect.stringContaining(`DeleteOptions.meta.k8s.io "" is invalid: ${message}`) });
    expect(f.causes?.[0]?.field).toBe(field);
  });

  const badBodies: [string, unknown, string][] = [
    ['a list', [], 'json: cannot unmarshal array into Go value of type v1.DeleteOptions'],
    ['a string', 'x', 'json: cannot unmarshal string into Go value of type v1.DeleteOptions'],
    ['another kind', { kind: 'Pod', apiVersion: 'v1' }, 'decoded object cannot be converted to DeleteOptions'],
    ['a grace period as a string', { gracePeriodSeconds: '5' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    ['a fractional grace period', { gracePeriodSeconds: 1.5 }, 'json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    ['dryRun as a string', { dryRun: 'All' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'],
    ['a number in dryRun', { dryRun: [1] }, 'json: cannot unmarshal number 1 into Go struct field DeleteOptions.dryRun of type string'],
    ['orphanDependents as a string', { orphanDependents: 'true' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool'],
    ['a propagation policy as a number', { propagationPolicy: 1 }, 'json: cannot unmarshal number 1 into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation'],
    ['preconditions as a list', { preconditions: [] }, 'json: cannot unmarshal array into Go struct field DeleteOptions.preconditions of type v1.Preconditions'],
    ['a precondition uid as a number', { preconditions: { uid: 5 } }, 'json: cannot unmarshal number 5 into Go struct field DeleteOptions.preconditions.uid of type types.UID'],
  ];
  it.each(badBodies)('400 for a body with %s', (_name, body, message) => {
    expect(failure(() => deleteOptionsFrom(q(''), body))).toMatchObject({ code: 400, reason: 'BadRequest', message });
  });
});

describe('deleteCollectionOptions', () => {
  it('reads the list from the query and the delete from the body', () => {
    expect(deleteCollectionOptions(q('labelSelector=a%3Db&limit=10'), { propagationPolicy: 'Foreground' })).toEqual({
      list: { watch: false, allowWatchBookmarks: false, sendInitialEvents: false, labelSelector: 'a=b', limit: 10 },
      delete: { dryRun: false, propagationPolicy: 'Foreground' },
    });
  });
  it('never watches', () => {
    expect(deleteCollectionOptions(q('watch=true'), undefined).list.watch).toBe(false);
  });
  it('validates the list part as a list', () => {
    expect(failure(() => deleteCollectionOptions(q('sendInitialEvents=true'), undefined))).toMatchObject({ code: 422, message: expect.stringContaining('sendInitialEvents is forbidden for list') });
  });
});
