/**
 * Write options: dryRun (every step but the write), fieldManager, and fieldValidation with unknown
 * and duplicate fields (Strict → one 400 listing all, Warn → one Warning header each, Ignore).
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, rawCall, unique, warningsOf } from './support.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const event = kindCase('Event');
const lastSeq = (): number => file.server.store.log.lastSeq;

describe('dryRun=All', () => {
  it('create: answers the object as it would be, validates, and writes nothing', async () => {
    const name = unique('dry');
    const before = lastSeq();
    const r = await call(file.base, 'POST', vap.collection() + '?dryRun=All', vap.make(name));
    expect(r.status, r.text).toBe(201);
    expect(r.body.metadata.name).toBe(name);
    expect(r.body.metadata.uid).toBeTruthy();
    expect(r.body.metadata.creationTimestamp).toBeTruthy();
    expect(r.body.spec.failurePolicy).toBe('Fail'); // defaulted
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
    expect(lastSeq()).toBe(before);

    const invalid = vap.make(unique('dry'));
    invalid.spec.failurePolicy = 'Sometimes';
    expect((await call(file.base, 'POST', vap.collection() + '?dryRun=All', invalid)).status).toBe(422);
    const ev = await call(file.base, 'POST', event.collection('nowhere-at-all') + '?dryRun=All', event.make(unique('ev')));
    expect(ev.status).toBe(404);
  });

  it('create of an existing name: 409 AlreadyExists, as the real create would answer', async () => {
    const name = unique('dry-dup');
    expect((await call(file.base, 'POST', vap.collection(), vap.make(name))).status).toBe(201);
    const r = await call(file.base, 'POST', vap.collection() + '?dryRun=All', vap.make(name));
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('AlreadyExists');
  });

  it('replace: answers the new object, checks the resourceVersion, and leaves the stored one unchanged', async () => {
    const name = unique('dry-put');
    const obj = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const before = lastSeq();
    const r = await call(file.base, 'PUT', vap.item(name) + '?dryRun=All', { ...obj, spec: { ...obj.spec, failurePolicy: 'Ignore' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.spec.failurePolicy).toBe('Ignore');
    expect(r.body.metadata.generation).toBe(2);
    const stored = (await call(file.base, 'GET', vap.item(name))).body;
    expect(stored).toEqual(obj);
    expect(lastSeq()).toBe(before);
    const stale = await call(file.base, 'PUT', vap.item(name) + '?dryRun=All', { ...obj, metadata: { ...obj.metadata, resourceVersion: '1' } });
    expect(stale.status).toBe(409);
    const bad = await call(file.base, 'PUT', vap.item(name) + '?dryRun=All', { ...obj, spec: { ...obj.spec, failurePolicy: 'Often' } });
    expect(bad.status).toBe(422);
  });

  it('delete and deletecollection: answer as a delete would and remove nothing', async () => {
    const name = unique('dry-del');
    const obj = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const before = lastSeq();
    const r = await call(file.base, 'DELETE', vap.item(name) + '?dryRun=All');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('Success');
    const body = await call(file.base, 'DELETE', vap.item(name), { dryRun: ['All'] });
    expect(body.status).toBe(200);
    expect((await call(file.base, 'GET', vap.item(name))).body).toEqual(obj);

    const fin = unique('dry-fin');
    const held = vap.make(fin);
    held.metadata.finalizers = ['example.com/hold'];
    await call(file.base, 'POST', vap.collection(), held);
    const marked = await call(file.base, 'DELETE', vap.item(fin) + '?dryRun=All');
    expect(marked.status).toBe(202);
    expect(marked.body.metadata.deletionTimestamp).toBeTruthy();
    expect((await call(file.base, 'GET', vap.item(fin))).body.metadata.deletionTimestamp).toBeUndefined();

    const label = unique('dry-dc');
    const lab = vap.make(unique('dry-dc'));
    lab.metadata.labels = { run: label };
    await call(file.base, 'POST', vap.collection(), lab);
    const mid = lastSeq();
    const dc = await call(file.base, 'DELETE', `${vap.collection()}?dryRun=All&labelSelector=run%3D${label}`);
    expect(dc.status).toBe(200);
    expect((await call(file.base, 'GET', `${vap.collection()}?labelSelector=run%3D${label}`)).body.items).toHaveLength(1);
    expect(lastSeq()).toBe(mid);
    expect(before).toBeLessThan(mid);
  });

  it('refuses any other dryRun value (422 Invalid, as Kubernetes) and does nothing', async () => {
    const name = unique('dry-bad');
    for (const [method, path, body] of [
      ['POST', vap.collection() + '?dryRun=Foo', vap.make(name)],
      ['POST', vap.collection() + '?dryRun=All&dryRun=Foo', vap.make(name)],
    ] as const) {
      const r = await call(file.base, method, path, body);
      expect(r.status, path).toBe(422);
      expect(r.body, path).toMatchObject({ reason: 'Invalid', details: { kind: 'CreateOptions', causes: [{ reason: 'FieldValueNotSupported', field: 'dryRun' }] } });
    }
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
    const obj = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const put = await call(file.base, 'PUT', vap.item(name) + '?dryRun=yes', { ...obj, spec: { ...obj.spec, failurePolicy: 'Ignore' } });
    expect(put.status).toBe(422);
    expect(put.body.details.kind).toBe('UpdateOptions');
    const del = await call(file.base, 'DELETE', vap.item(name) + '?dryRun=Foo');
    expect(del.status).toBe(422);
    expect((await call(file.base, 'GET', vap.item(name))).body).toEqual(obj);
  });
});

describe('fieldManager', () => {
  it('takes up to 128 printable characters and refuses more (422)', async () => {
    expect((await call(file.base, 'POST', vap.collection() + '?fieldManager=' + 'm'.repeat(128), vap.make(unique('fm')))).status).toBe(201);
    const long = unique('fm');
    const r = await call(file.base, 'POST', vap.collection() + '?fieldManager=' + 'm'.repeat(129), vap.make(long));
    expect(r.status).toBe(422);
    expect(r.body.details).toMatchObject({ kind: 'CreateOptions', causes: [{ reason: 'FieldValueTooLong', field: 'fieldManager' }] });
    const ctl = await call(file.base, 'POST', vap.collection() + '?fieldManager=a%01b', vap.make(long));
    expect(ctl.status).toBe(422);
    expect(ctl.body.details.causes[0].field).toBe('fieldManager');
    expect((await call(file.base, 'GET', vap.item(long))).status).toBe(404);
  });
});

describe('fieldValidation', () => {
  /** spec before metadata, so the unknown field comes first in the document. */
  const body = (name: string, extra = ''): string =>
    `{"apiVersion":"admissionregistration.orch.io/v1","kind":"ValidatingAdmissionPolicy",` +
    `"spec":${JSON.stringify({ ...vap.make(name).spec, foo: 1 })},` +
    `"metadata":{"name":"${name}-first","name":"${name}"${extra}}}`;

  it('Strict: one 400 that lists every unknown and duplicate field, in document order', async () => {
    const name = unique('strict');
    const r = await call(file.base, 'POST', vap.collection() + '?fieldValidation=Strict', body(name, ',"labels":{"a":"b"},"bogus":true'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(r.body.message).toBe('strict decoding error: unknown field "spec.foo", duplicate field "metadata.name", unknown field "metadata.bogus"');
    expect((await call(file.base, 'GET', vap.item(name))).status).toBe(404);
    const clean = await call(file.base, 'POST', vap.collection() + '?fieldValidation=Strict', vap.make(name));
    expect(clean.status).toBe(201);
  });

  it('Warn (the default): one Warning header per field, the last duplicate kept, unknown fields not stored', async () => {
    for (const query of ['', '?fieldValidation=Warn']) {
      const name = unique('warn');
      const r = await rawCall(file.base, 'POST', vap.collection() + query, body(name));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(warningsOf(r)).toEqual(['299 - "unknown field \\"spec.foo\\""', '299 - "duplicate field \\"metadata.name\\""']);
      const got = (await call(file.base, 'GET', vap.item(name))).body;
      expect(got.spec.foo).toBeUndefined();
      expect(got.metadata.name).toBe(name);
      expect((await call(file.base, 'GET', vap.item(`${name}-first`))).status).toBe(404);
    }
    const name = unique('warn-put');
    const created = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const put = await rawCall(file.base, 'PUT', vap.item(name), JSON.stringify({ ...created, extra: { x: 1 }, spec: { ...created.spec, validations: [{ expression: 'true', nope: 1 }] } }));
    expect(put.status).toBe(200);
    // `spec` keeps its place from `created`; `extra` comes last.
    expect(warningsOf(put)).toEqual(['299 - "unknown field \\"spec.validations[0].nope\\""', '299 - "unknown field \\"extra\\""']);
  });

  it('Ignore: no warnings, unknown fields dropped', async () => {
    const name = unique('ignore');
    const r = await rawCall(file.base, 'POST', vap.collection() + '?fieldValidation=Ignore', body(name));
    expect(r.status).toBe(201);
    expect(warningsOf(r)).toEqual([]);
    expect(r.body.spec.foo).toBeUndefined();
  });

  it('treats names of Object.prototype members as the unknown fields they are', async () => {
    const name = unique('proto');
    const text = (n: string) => `{"metadata":{"name":"${n}","__proto__":{"name":"evil"}},"constructor":1,"spec":{"toString":"x"}}`;
    const strict = await call(file.base, 'POST', '/api/v1/namespaces?fieldValidation=Strict', text(name));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: unknown field "metadata.__proto__", unknown field "constructor", unknown field "spec.toString"');
    const warn = await rawCall(file.base, 'POST', '/api/v1/namespaces', text(name));
    expect(warn.status).toBe(201);
    expect(warningsOf(warn)).toHaveLength(3);
    const got = await call(file.base, 'GET', `/api/v1/namespaces/${name}`);
    expect(got.text).not.toContain('__proto__');
    expect(got.text).not.toContain('constructor');
    expect(got.text).not.toContain('toString');
    expect(got.body.metadata.name).toBe(name);
  });

  it('refuses an unknown fieldValidation value (422)', async () => {
    const r = await call(file.base, 'POST', vap.collection() + '?fieldValidation=Loose', vap.make(unique('fv')));
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueNotSupported', field: 'fieldValidation' });
  });

  it('YAML bodies: duplicates and unknown fields are found too', async () => {
    const name = unique('yaml');
    const yaml = `apiVersion: admissionregistration.orch.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: ${name}\n  name: ${name}\nspec:\n  policyName: p\n  validationActions: [Deny]\n  colour: blue\n`;
    const binding = kindCase('ValidatingAdmissionPolicyBinding');
    const strict = await call(file.base, 'POST', binding.collection() + '?fieldValidation=Strict', yaml, { 'Content-Type': 'application/yaml' });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: duplicate field "metadata.name", unknown field "spec.colour"');
  });
});
