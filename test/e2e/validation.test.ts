/**
 * The kinds' own rules, through HTTP: each refusal is one 422 Invalid Status listing every cause with
 * its field path, and nothing is written.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

type Cause = [reason: string, field: string];
type Case = [what: string, edit: (o: any) => void, causes: Cause[]];

const conditions = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, expression: 'true' }));

const CASES: Record<string, Case[]> = {
  ValidatingAdmissionPolicy: [
    ['more than 64 matchConditions', (o) => (o.spec.matchConditions = conditions(65)), [['FieldValueTooMany', 'spec.matchConditions']]],
    ['failurePolicy outside Ignore/Fail', (o) => (o.spec.failurePolicy = 'Maybe'), [['FieldValueNotSupported', 'spec.failurePolicy']]],
    ['matchConstraints missing', (o) => delete o.spec.matchConstraints, [['FieldValueRequired', 'spec.matchConstraints']]],
    [
      'neither validations nor auditAnnotations',
      (o) => {
        delete o.spec.validations;
        delete o.spec.auditAnnotations;
      },
      [
        ['FieldValueRequired', 'spec.validations'],
        ['FieldValueRequired', 'spec.auditAnnotations'],
      ],
    ],
    [
      'a variable that references a later variable',
      (o) =>
        (o.spec.variables = [
          { name: 'a', expression: 'variables.b' },
          { name: 'b', expression: '1' },
        ]),
      [['FieldValueInvalid', 'spec.variables[0].expression']],
    ],
  ],
  ValidatingAdmissionPolicyBinding: [
    ['policyName missing', (o) => (o.spec.policyName = ''), [['FieldValueRequired', 'spec.policyName']]],
    ['validationActions outside Deny/Warn/Audit', (o) => (o.spec.validationActions = ['Deny', 'Log']), [['FieldValueNotSupported', 'spec.validationActions[1]']]],
  ],
  MutatingAdmissionPolicy: [
    ['no mutations', (o) => (o.spec.mutations = []), [['FieldValueRequired', 'spec.mutations']]],
    ['more than 64 matchConditions', (o) => (o.spec.matchConditions = conditions(65)), [['FieldValueTooMany', 'spec.matchConditions']]],
    ['reinvocationPolicy missing', (o) => delete o.spec.reinvocationPolicy, [['FieldValueRequired', 'spec.reinvocationPolicy']]],
    ['matching DELETE', (o) => (o.spec.matchConstraints.resourceRules[0].operations = ['CREATE', 'DELETE']), [['FieldValueNotSupported', 'spec.matchConstraints.resourceRules[0].operations[1]']]],
  ],
  MutatingAdmissionPolicyBinding: [
    ['policyName missing', (o) => delete o.spec.policyName, [['FieldValueRequired', 'spec.policyName']]],
    [
      'paramRef with both name and selector',
      (o) => (o.spec.paramRef = { name: 'p', selector: { matchLabels: { a: 'b' } }, parameterNotFoundAction: 'Allow' }),
      [
        ['FieldValueForbidden', 'spec.paramRef.name'],
        ['FieldValueForbidden', 'spec.paramRef.selector'],
      ],
    ],
  ],
  MutatingWebhookConfiguration: [
    ['a webhook name with fewer than three segments', (o) => (o.webhooks[0].name = 'sidecar.example'), [['FieldValueInvalid', 'webhooks[0].name']]],
    ['duplicate webhook names', (o) => (o.webhooks[1].name = o.webhooks[0].name), [['FieldValueDuplicate', 'webhooks[1].name']]],
    ['sideEffects outside the allowed values', (o) => (o.webhooks[0].sideEffects = 'Some'), [['FieldValueNotSupported', 'webhooks[0].sideEffects']]],
  ],
  Event: [
    ['note over 1 kB', (o) => (o.note = 'n'.repeat(1025)), [['FieldValueInvalid', 'note']]],
    ['reportingInstance over 128 characters', (o) => (o.reportingInstance = 'i'.repeat(129)), [['FieldValueInvalid', 'reportingInstance']]],
    ['action empty', (o) => (o.action = ''), [['FieldValueRequired', 'action']]],
    ['eventTime missing', (o) => delete o.eventTime, [['FieldValueRequired', 'eventTime']]],
    [
      'reason and action over 128 characters together',
      (o) => {
        o.reason = 'r'.repeat(129);
        o.action = 'a'.repeat(129);
      },
      [
        ['FieldValueInvalid', 'action'],
        ['FieldValueInvalid', 'reason'],
      ],
    ],
  ],
  Namespace: [
    ['a bare non-standard spec finalizer', (o) => (o.spec = { finalizers: ['cleanup'] }), [['FieldValueInvalid', 'spec.finalizers']]],
    ['a name with a dot', (o) => (o.metadata.name = `a.${o.metadata.name}`), [['FieldValueInvalid', 'metadata.name']]],
  ],
};

describe.each(Object.entries(CASES))('%s', (kind, cases) => {
  const k = kindCase(kind);
  const ns = k.namespaced ? 'default' : undefined;
  it.each(cases)('refuses %s', async (_what, edit, expected) => {
    const name = unique('inv');
    const obj = k.make(name);
    edit(obj);
    const r = await call(file.base, 'POST', k.collection(ns), obj);
    expect(r.status, r.text).toBe(422);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422, details: { kind } });
    const got: Cause[] = r.body.details.causes.map((c: any) => [c.reason, c.field]);
    expect(got).toEqual(expected);
    for (const [, field] of expected) expect(r.body.message).toContain(field);
    expect((await call(file.base, 'GET', k.item(obj.metadata.name, ns))).status).toBe(404);
  });
});

describe('rules on replace', () => {
  it('holds a replace to the same rules, and to Event immutability', async () => {
    const vap = kindCase('ValidatingAdmissionPolicy');
    const name = unique('upd');
    const obj = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const r = await call(file.base, 'PUT', vap.item(name), { ...obj, spec: { ...obj.spec, matchConditions: conditions(65), failurePolicy: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: any) => c.field).sort()).toEqual(['spec.failurePolicy', 'spec.matchConditions']);
    expect((await call(file.base, 'GET', vap.item(name))).body).toEqual(obj);

    const event = kindCase('Event');
    const ev = unique('ev');
    const created = (await call(file.base, 'POST', event.collection('default'), event.make(ev))).body;
    const changed = await call(file.base, 'PUT', event.item(ev), { ...created, note: 'rewritten', action: 'Other' });
    expect(changed.status).toBe(422);
    expect(changed.body.details.causes.map((c: any) => c.field).sort()).toEqual(['action', 'note']);
  });
});
