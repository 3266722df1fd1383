/**
 * ValidatingAdmissionPolicy's /status: the main resource ignores status, /status takes only status.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const CONDITION = { type: 'Ready', status: 'True', reason: 'TypeChecked', message: 'ok', lastTransitionTime: '2026-01-02T03:04:05Z' };

async function createWithStatus(name: string): Promise<any> {
  const created = await call(file.base, 'POST', vap.collection(), { ...vap.make(name), status: { observedGeneration: 9 } });
  expect(created.status, created.text).toBe(201);
  // Status belongs to the system: a create drops it.
  expect(created.body.status).toBeUndefined();
  const put = await call(file.base, 'PUT', vap.item(name) + '/status', { ...created.body, status: { observedGeneration: 1, conditions: [CONDITION] } });
  expect(put.status, put.text).toBe(200);
  return put.body;
}

describe('ValidatingAdmissionPolicy status', () => {
  it('a PUT of /status changes the status and nothing else', async () => {
    const name = unique('st');
    const obj = await createWithStatus(name);
    expect(obj.status).toEqual({ observedGeneration: 1, conditions: [CONDITION] });
    const attempt = {
      ...obj,
      metadata: { ...obj.metadata, labels: { sneaky: 'yes' } },
      spec: { ...obj.spec, failurePolicy: 'Ignore' },
      status: { observedGeneration: 2, conditions: [{ ...CONDITION, status: 'False' }] },
    };
    const put = await call(file.base, 'PUT', vap.item(name) + '/status', attempt);
    expect(put.status, put.text).toBe(200);
    expect(put.body.status.observedGeneration).toBe(2);
    expect(put.body.status.conditions[0].status).toBe('False');
    expect(put.body.spec.failurePolicy).toBe('Fail');
    expect(put.body.metadata.labels).toBeUndefined();
    expect(put.body.metadata.generation).toBe(1);
    const got = (await call(file.base, 'GET', vap.item(name))).body;
    expect(got).toEqual(put.body);
  });

  it('a PUT of the main resource ignores the status it carries', async () => {
    const name = unique('main');
    const obj = await createWithStatus(name);
    const put = await call(file.base, 'PUT', vap.item(name), { ...obj, spec: { ...obj.spec, failurePolicy: 'Ignore' }, status: { observedGeneration: 77 } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.spec.failurePolicy).toBe('Ignore');
    expect(put.body.status).toEqual(obj.status);
    const dropped = await call(file.base, 'PUT', vap.item(name), { ...put.body, status: undefined });
    expect(dropped.body.status).toEqual(obj.status);
  });

  it('GET of /status answers the object; stale writes to /status conflict; bad conditions are Invalid', async () => {
    const name = unique('get');
    const obj = await createWithStatus(name);
    const got = await call(file.base, 'GET', vap.item(name) + '/status');
    expect(got.status).toBe(200);
    expect(got.body).toEqual(obj);

    const newer = await call(file.base, 'PUT', vap.item(name) + '/status', { ...obj, status: { observedGeneration: 3 } });
    expect(newer.status).toBe(200);
    const stale = await call(file.base, 'PUT', vap.item(name) + '/status', { ...obj, status: { observedGeneration: 4 } });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');

    const bad = await call(file.base, 'PUT', vap.item(name) + '/status', {
      ...newer.body,
      status: { conditions: [{ type: 'Ready', status: 'Maybe', reason: 'x y', lastTransitionTime: '2026-01-02T03:04:05Z' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes.map((c: any) => c.field)).toEqual(['status.conditions[0].status', 'status.conditions[0].reason']);
    expect((await call(file.base, 'GET', vap.item(name))).body.status).toEqual({ observedGeneration: 3 });
  });

  it('answers 404 for /status of a missing object and of a kind without status', async () => {
    const none = unique('none');
    const missing = await call(file.base, 'PUT', vap.item(none) + '/status', { ...vap.make(none), status: {} });
    expect(missing.status).toBe(404);
    expect(missing.body.reason).toBe('NotFound');
    const binding = kindCase('ValidatingAdmissionPolicyBinding');
    const name = unique('b');
    expect((await call(file.base, 'POST', binding.collection(), binding.make(name))).status).toBe(201);
    const r = await call(file.base, 'GET', binding.item(name) + '/status');
    expect(r.status).toBe(404);
    expect(r.body.kind).toBe('Status');
  });
});
