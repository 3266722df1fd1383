import { describe, expect, it } from 'vitest';
import { mutatingWebhookConfiguration as kind } from '../../src/resources/mutating-webhook-configuration.js';
import { fixtures, pairs, repeat, rowRunner, type Row } from './fixtures.js';

const run = rowRunner(kind, fixtures.mutatingWebhookConfiguration);
const W = 'webhooks[0]';

describe('MutatingWebhookConfiguration defaults', () => {
  it('fills the v1 webhook defaults', () => {
    const o = fixtures.mutatingWebhookConfiguration();
    kind.applyDefaults(o);
    expect(o.webhooks[0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
    });
    expect(o.webhooks[0].rules[0].scope).toBe('*');
    expect(o.webhooks[0].clientConfig.service.port).toBe(443);
    expect(o.webhooks[1].timeoutSeconds).toBe(30);
  });

  it('does not default sideEffects or admissionReviewVersions (required in v1)', () => {
    const o = fixtures.mutatingWebhookConfiguration();
    delete o.webhooks[0].sideEffects;
    delete o.webhooks[0].admissionReviewVersions;
    kind.applyDefaults(o);
    expect([o.webhooks[0].sideEffects, o.webhooks[0].admissionReviewVersions]).toEqual([undefined, undefined]);
  });
});

describe('MutatingWebhookConfiguration validation', () => {
  const rows: Row[] = [
    ['the fixture is valid', () => {}, []],
    ['no webhooks is valid', (o) => (o.webhooks = []), []],
    ['name is required', (o) => (o.webhooks[0].name = ''), [['FieldValueRequired', `${W}.name`]]],
    ['name has at least three segments', (o) => (o.webhooks[0].name = 'sidecar.example'), [['FieldValueInvalid', `${W}.name`]]],
    ['name is a DNS subdomain', (o) => (o.webhooks[0].name = 'Inject.example.com'), [['FieldValueInvalid', `${W}.name`]]],
    ['names are unique', (o) => (o.webhooks[1].name = o.webhooks[0].name), [['FieldValueDuplicate', 'webhooks[1].name']]],
    ['clientConfig: one of url and service', (o) => (o.webhooks[0].clientConfig = {}), [['FieldValueRequired', `${W}.clientConfig`]]],
    ['clientConfig: not both url and service', (o) => (o.webhooks[0].clientConfig.url = 'https://x.example.com'), [['FieldValueRequired', `${W}.clientConfig`]]],
    ['clientConfig.url: https only', (o) => (o.webhooks[1].clientConfig.url = 'http://audit.example.com/hook'), [['FieldValueInvalid', 'webhooks[1].clientConfig.url']]],
    ['clientConfig.url: a host', (o) => (o.webhooks[1].clientConfig.url = 'https:///hook'), [['FieldValueInvalid', 'webhooks[1].clientConfig.url']]],
    ['clientConfig.url: no user info', (o) => (o.webhooks[1].clientConfig.url = 'https://me:pw@audit.example.com/'), [['FieldValueInvalid', 'webhooks[1].clientConfig.url']]],
    ['clientConfig.url: no query', (o) => (o.webhooks[1].clientConfig.url = 'https://audit.example.com/?a=b'), [['FieldValueInvalid', 'webhooks[1].clientConfig.url']]],
    ['clientConfig.url: no fragment', (o) => (o.webhooks[1].clientConfig.url = 'https://audit.example.com/#top'), [['FieldValueInvalid', 'webhooks[1].clientConfig.url']]],
    ['clientConfig.url: parses', (o) => (o.webhooks[1].clientConfig.url = 'https://a\u0001b'), [['FieldValueRequired', 'webhooks[1].clientConfig.url']]],
    [
      'clientConfig.url: a bare word is neither https nor has a host',
      (o) => (o.webhooks[1].clientConfig.url = 'audit'),
      [
        ['FieldValueInvalid', 'webhooks[1].clientConfig.url'],
        ['FieldValueInvalid', 'webhooks[1].clientConfig.url'],
      ],
    ],
    ['clientConfig.service: name required', (o) => (o.webhooks[0].clientConfig.service.name = ''), [['FieldValueRequired', `${W}.clientConfig.service.name`]]],
    ['clientConfig.service: namespace required', (o) => delete o.webhooks[0].clientConfig.service.namespace, [['FieldValueRequired', `${W}.clientConfig.service.namespace`]]],
    ['clientConfig.service: port 1-65535', (o) => (o.webhooks[0].clientConfig.service.port = 70000), [['FieldValueInvalid', `${W}.clientConfig.service.port`]]],
    ['clientConfig.service: path starts with /', (o) => (o.webhooks[0].clientConfig.service.path = 'mutate'), [['FieldValueInvalid', `${W}.clientConfig.service.path`]]],
    ['clientConfig.service: path segments are DNS subdomains', (o) => (o.webhooks[0].clientConfig.service.path = '/Mutate'), [['FieldValueInvalid', `${W}.clientConfig.service.path`]]],
    ['clientConfig.service: empty path segment', (o) => (o.webhooks[0].clientConfig.service.path = '/a//b'), [['FieldValueInvalid', `${W}.clientConfig.service.path`]]],
    ['sideEffects required', (o) => delete o.webhooks[0].sideEffects, [['FieldValueRequired', `${W}.sideEffects`]]],
    ['sideEffects None or NoneOnDryRun on create', (o) => (o.webhooks[0].sideEffects = 'Some'), [['FieldValueNotSupported', `${W}.sideEffects`]]],
    ['admissionReviewVersions required', (o) => (o.webhooks[0].admissionReviewVersions = []), [['FieldValueRequired', `${W}.admissionReviewVersions`]]],
    ['admissionReviewVersions: one of v1, v1beta1', (o) => (o.webhooks[0].admissionReviewVersions = ['v2']), [['FieldValueInvalid', `${W}.admissionReviewVersions`]]],
    ['admissionReviewVersions: no duplicates', (o) => (o.webhooks[0].admissionReviewVersions = ['v1', 'v1']), [['FieldValueInvalid', `${W}.admissionReviewVersions[1]`]]],
    ['admissionReviewVersions: DNS-1035 labels', (o) => (o.webhooks[0].admissionReviewVersions = ['v1', 'V2']), [['FieldValueInvalid', `${W}.admissionReviewVersions[1]`]]],
    ['timeoutSeconds at most 30', (o) => (o.webhooks[0].timeoutSeconds = 31), [['FieldValueInvalid', `${W}.timeoutSeconds`]]],
    ['timeoutSeconds at least 1', (o) => (o.webhooks[0].timeoutSeconds = 0), [['FieldValueInvalid', `${W}.timeoutSeconds`]]],
    ['failurePolicy Ignore or Fail', (o) => (o.webhooks[0].failurePolicy = 'Retry'), [['FieldValueNotSupported', `${W}.failurePolicy`]]],
    ['matchPolicy Exact or Equivalent', (o) => (o.webhooks[0].matchPolicy = 'Fuzzy'), [['FieldValueNotSupported', `${W}.matchPolicy`]]],
    ['reinvocationPolicy Never or IfNeeded', (o) => (o.webhooks[0].reinvocationPolicy = 'Always'), [['FieldValueNotSupported', `${W}.reinvocationPolicy`]]],
    ['reinvocationPolicy IfNeeded is allowed', (o) => (o.webhooks[0].reinvocationPolicy = 'IfNeeded'), []],
    ['rules: operations known', (o) => (o.webhooks[0].rules[0].operations = ['PATCH']), [['FieldValueNotSupported', `${W}.rules[0].operations[0]`]]],
    ['rules: DELETE and CONNECT are webhook operations', (o) => (o.webhooks[0].rules[0].operations = ['DELETE', 'CONNECT']), []],
    ['rules: operations required', (o) => (o.webhooks[0].rules[0].operations = []), [['FieldValueRequired', `${W}.rules[0].operations`]]],
    ["rules: '*' alone among operations", (o) => (o.webhooks[0].rules[0].operations = ['*', 'CREATE']), [['FieldValueInvalid', `${W}.rules[0].operations`]]],
    ['rules: apiGroups required', (o) => (o.webhooks[0].rules[0].apiGroups = []), [['FieldValueRequired', `${W}.rules[0].apiGroups`]]],
    ["rules: '*' alone among apiGroups", (o) => (o.webhooks[0].rules[0].apiGroups = ['*', 'apps']), [['FieldValueInvalid', `${W}.rules[0].apiGroups`]]],
    ['rules: apiVersions required', (o) => delete o.webhooks[0].rules[0].apiVersions, [['FieldValueRequired', `${W}.rules[0].apiVersions`]]],
    ['rules: apiVersions non-empty', (o) => (o.webhooks[0].rules[0].apiVersions = ['']), [['FieldValueRequired', `${W}.rules[0].apiVersions[0]`]]],
    ['rules: resources required', (o) => (o.webhooks[0].rules[0].resources = []), [['FieldValueRequired', `${W}.rules[0].resources`]]],
    ["rules: '*/*' alone", (o) => (o.webhooks[0].rules[0].resources = ['*/*', 'pods']), [['FieldValueInvalid', `${W}.rules[0].resources`]]],
    ['rules: x/* covers x/y', (o) => (o.webhooks[0].rules[0].resources = ['pods/*', 'pods/log']), [['FieldValueInvalid', `${W}.rules[0].resources[1]`]]],
    ['rules: */y covers x/y', (o) => (o.webhooks[0].rules[0].resources = ['*/status', 'pods/status']), [['FieldValueInvalid', `${W}.rules[0].resources[1]`]]],
    ['rules: subresources are allowed', (o) => (o.webhooks[0].rules[0].resources = ['pods', 'pods/status']), []],
    ['rules: scope Cluster, Namespaced or *', (o) => (o.webhooks[0].rules[0].scope = 'Global'), [['FieldValueNotSupported', `${W}.rules[0].scope`]]],
    ['matchConditions: at most 64', (o) => (o.webhooks[0].matchConditions = repeat(65, (i) => ({ name: `c${i}`, expression: 'true' }))), [['FieldValueTooMany', `${W}.matchConditions`]]],
    ['matchConditions: names unique', (o) => o.webhooks[0].matchConditions.push({ name: 'only-labelled', expression: 'true' }), [['FieldValueDuplicate', `${W}.matchConditions[1].name`]]],
    [
      'namespaceSelector: a valid operator',
      (o) => (o.webhooks[0].namespaceSelector = { matchExpressions: [{ key: 'a', operator: 'Matches' }] }),
      [['FieldValueInvalid', `${W}.namespaceSelector.matchExpressions[0].operator`]],
    ],
  ];
  it.each(rows)('%s', run);
});

describe('MutatingWebhookConfiguration update ratchets', () => {
  const update = (old: any, mutate: (o: any) => void) => {
    const o = structuredClone(old);
    mutate(o);
    kind.applyDefaults(o);
    return pairs(kind.validateUpdate(o, old));
  };

  it('keeps sideEffects Some when the stored object had it', () => {
    const old = fixtures.mutatingWebhookConfiguration();
    old.webhooks[0].sideEffects = 'Some';
    expect(update(old, (o) => (o.webhooks[0].timeoutSeconds = 5))).toEqual([]);
  });

  it('rejects sideEffects Some when the stored object had none', () => {
    expect(update(fixtures.mutatingWebhookConfiguration(), (o) => (o.webhooks[0].sideEffects = 'Some'))).toEqual([['FieldValueNotSupported', `${W}.sideEffects`]]);
  });

  it('keeps unrecognized review versions and duplicate names that were stored', () => {
    const old = fixtures.mutatingWebhookConfiguration();
    old.webhooks[0].admissionReviewVersions = ['v2'];
    old.webhooks[1].name = old.webhooks[0].name;
    expect(update(old, () => {})).toEqual([]);
  });

  it('keeps invalid selector values that were stored', () => {
    const old = fixtures.mutatingWebhookConfiguration();
    old.webhooks[0].objectSelector = { matchExpressions: [{ key: 'a', operator: 'In', values: ['bad value!'] }] };
    expect(update(old, () => {})).toEqual([]);
  });
});

describe('MutatingWebhookConfiguration schema and table', () => {
  it('merges webhooks by name', () => {
    const w = kind.schema.properties!.webhooks;
    expect([w['x-kubernetes-patch-strategy'], w['x-kubernetes-patch-merge-key'], w['x-kubernetes-list-map-keys']]).toEqual(['merge', 'name', ['name']]);
  });

  it('prints WEBHOOKS', () => {
    expect(kind.tableColumns.map((c) => [c.name, c.cell(fixtures.mutatingWebhookConfiguration())])).toEqual([['Webhooks', 2]]);
  });
});
