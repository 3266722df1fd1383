/**
 * Object metadata the server writes and checks: generateName, uid, creationTimestamp,
 * resourceVersion (the log sequence), generation, labels, annotations and names.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

const vap = kindCase('ValidatingAdmissionPolicy');
const event = kindCase('Event');
const ns = kindCase('Namespace');

const causes = (body: any): [string, string][] => (body.details?.causes ?? []).map((c: any) => [c.reason, c.field]);

describe('system metadata', () => {
  it('completes generateName with a random suffix, and a given name wins over it', async () => {
    const obj = vap.make('');
    obj.metadata = { generateName: 'gen-' };
    const a = await call(file.base, 'POST', vap.collection(), obj);
    const b = await call(file.base, 'POST', vap.collection(), obj);
    expect(a.status, a.text).toBe(201);
    expect(a.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a.body.metadata.generateName).toBe('gen-');
    expect(b.body.metadata.name).not.toBe(a.body.metadata.name);
    expect((await call(file.base, 'GET', vap.item(a.body.metadata.name))).status).toBe(200);

    const name = unique('named');
    const both = await call(file.base, 'POST', vap.collection(), { ...obj, metadata: { name, generateName: 'gen-' } });
    expect(both.body.metadata.name).toBe(name);
  });

  it('sets uid and creationTimestamp on create and keeps them on replace', async () => {
    const before = Date.now() - 2000;
    const a = (await call(file.base, 'POST', vap.collection(), vap.make(unique('uid')))).body;
    const b = (await call(file.base, 'POST', vap.collection(), vap.make(unique('uid')))).body;
    expect(a.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(a.metadata.uid).not.toBe(b.metadata.uid);
    expect(a.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(a.metadata.creationTimestamp)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(a.metadata.creationTimestamp)).toBeLessThanOrEqual(Date.now() + 1000);

    // A PUT that leaves them out gets the stored ones back; one that changes the uid is refused.
    const { uid, creationTimestamp, ...rest } = a.metadata;
    const put = await call(file.base, 'PUT', vap.item(a.metadata.name), { ...a, metadata: { ...rest, labels: { x: 'y' } } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.metadata.uid).toBe(uid);
    expect(put.body.metadata.creationTimestamp).toBe(creationTimestamp);
    // Kubernetes reads the uid of a replacement as a precondition: another uid is a 409 Conflict.
    const bad = await call(file.base, 'PUT', vap.item(a.metadata.name), { ...put.body, metadata: { ...put.body.metadata, uid: b.metadata.uid } });
    expect(bad.status).toBe(409);
    expect(bad.body).toMatchObject({ reason: 'Conflict', details: { name: a.metadata.name, kind: 'validatingadmissionpolicies' } });
    expect(bad.body.message).toContain(`Precondition failed: UID in precondition: ${b.metadata.uid}, UID in object meta: ${uid}`);
    expect((await call(file.base, 'GET', vap.item(a.metadata.name))).body.metadata.uid).toBe(uid);
  });

  it('uses the log sequence of the write as resourceVersion, growing with every write', async () => {
    const name = unique('rv');
    const created = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    const rv1 = Number(created.metadata.resourceVersion);
    const entry = await file.server.store.log.get(rv1);
    expect(entry?.type).toBe('put');
    expect(entry?.key).toContain(name);
    expect((entry?.value as any).metadata.uid).toBe(created.metadata.uid);

    const put = (await call(file.base, 'PUT', vap.item(name), { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } })).body;
    const rv2 = Number(put.metadata.resourceVersion);
    expect(rv2).toBeGreaterThan(rv1);
    expect((await file.server.store.log.get(rv2))?.key).toBe(entry?.key);
    const list = await call(file.base, 'GET', vap.collection());
    expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(rv2);
    expect(Number(list.body.metadata.resourceVersion)).toBe(file.server.store.log.lastSeq);
  });

  it('bumps generation on spec changes only, not on labels, annotations or status', async () => {
    const name = unique('gen');
    let obj = (await call(file.base, 'POST', vap.collection(), vap.make(name))).body;
    expect(obj.metadata.generation).toBe(1);
    const put = async (o: any, path = vap.item(name)) => {
      const r = await call(file.base, 'PUT', path, o);
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    obj = await put({ ...obj, metadata: { ...obj.metadata, labels: { tier: 'one' } } });
    expect(obj.metadata.generation).toBe(1);
    obj = await put({ ...obj, metadata: { ...obj.metadata, annotations: { note: 'hello' } } });
    expect(obj.metadata.generation).toBe(1);
    obj = await put({ ...obj, status: { observedGeneration: 1 } }, vap.item(name) + '/status');
    expect(obj.status.observedGeneration).toBe(1);
    expect(obj.metadata.generation).toBe(1);
    obj = await put({ ...obj, spec: { ...obj.spec, failurePolicy: 'Ignore' } });
    expect(obj.metadata.generation).toBe(2);
    obj = await put({ ...obj, spec: { ...obj.spec, failurePolicy: 'Fail' } });
    expect(obj.metadata.generation).toBe(3);
    // A client cannot set generation itself.
    obj = await put({ ...obj, metadata: { ...obj.metadata, generation: 42 } });
    expect(obj.metadata.generation).toBe(3);
    // The same spec with its keys in another order (another client's serializer) is no change.
    const reordered = Object.fromEntries(Object.entries(obj.spec).reverse());
    const same = await put({ ...obj, spec: reordered });
    expect(same.metadata.generation).toBe(3);
    expect(same.metadata.resourceVersion).toBe(obj.metadata.resourceVersion);
  });

  it('does not bump a Namespace generation for a replace that changes nothing of its spec', async () => {
    const name = unique('nsgen');
    const created = (await call(file.base, 'POST', ns.collection(), ns.make(name))).body;
    expect(created.metadata.generation).toBe(1);
    const put = await call(file.base, 'PUT', ns.item(name), { metadata: { name, labels: { a: 'b' } } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.metadata.generation).toBe(1);
    // The spec is the stored one: the kubernetes finalizer a create adds.
    expect(put.body.spec).toEqual({ finalizers: ['kubernetes'] });
  });

  it('answers apiVersion and kind first, as Kubernetes serializes objects, even when the body left them out', async () => {
    const name = unique('order');
    const r = await call(file.base, 'POST', ns.collection(), { metadata: { name } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).slice(0, 3)).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(r.text.startsWith('{"apiVersion":"v1","kind":"Namespace","metadata":')).toBe(true);
  });

  it('stores kubectl.kubernetes.io/last-applied-configuration unchanged', async () => {
    const name = unique('applied');
    const obj = vap.make(name);
    const applied = JSON.stringify(obj) + '\n';
    obj.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': applied };
    const created = await call(file.base, 'POST', vap.collection(), obj);
    expect(created.status).toBe(201);
    const got = await call(file.base, 'GET', vap.item(name));
    expect(got.body.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBe(applied);
  });
});

describe('metadata validation (422 Invalid with field paths)', () => {
  it('refuses invalid label keys and values, naming metadata.labels', async () => {
    const obj = vap.make(unique('labels'));
    obj.metadata.labels = { 'bad key!': 'v', ok: 'x'.repeat(64), fine: 'yes' };
    const r = await call(file.base, 'POST', vap.collection(), obj);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, details: { kind: 'ValidatingAdmissionPolicy', name: obj.metadata.name } });
    expect(causes(r.body)).toEqual([
      ['FieldValueInvalid', 'metadata.labels'],
      ['FieldValueInvalid', 'metadata.labels'],
    ]);
    expect((await call(file.base, 'GET', vap.item(obj.metadata.name))).status).toBe(404);
  });

  it('refuses invalid annotation keys and more than 256 KiB of annotations', async () => {
    const obj = vap.make(unique('ann'));
    obj.metadata.annotations = { '-bad': 'v', 'example.com/': 'v' };
    const r = await call(file.base, 'POST', vap.collection(), obj);
    expect(r.status).toBe(422);
    // '-bad' breaks the name rule once; 'example.com/' has an empty name part (empty, and not matching).
    expect(causes(r.body)).toEqual(Array(3).fill(['FieldValueInvalid', 'metadata.annotations']));

    obj.metadata.annotations = { big: 'x'.repeat(256 * 1024) };
    const big = await call(file.base, 'POST', vap.collection(), obj);
    expect(big.status).toBe(422);
    expect(causes(big.body)).toEqual([['FieldValueTooLong', 'metadata.annotations']]);
  });

  it('refuses names that are not DNS subdomains (DNS labels for Namespaces) and a missing name', async () => {
    // A binding: a policy's name also prefixes its audit annotation keys, which adds causes of its own.
    const binding = kindCase('ValidatingAdmissionPolicyBinding');
    for (const bad of ['Upper', 'under_score', 'a'.repeat(254), '-lead']) {
      const r = await call(file.base, 'POST', binding.collection(), binding.make(bad));
      expect(r.status, bad).toBe(422);
      expect(causes(r.body), bad).toEqual([['FieldValueInvalid', 'metadata.name']]);
    }
    const dotted = await call(file.base, 'POST', vap.collection(), vap.make(`${unique('a')}.example.com`));
    expect(dotted.status).toBe(201);
    const nsDotted = await call(file.base, 'POST', ns.collection(), ns.make('a.b'));
    expect(nsDotted.status).toBe(422);
    expect(causes(nsDotted.body)).toEqual([['FieldValueInvalid', 'metadata.name']]);

    const anon = binding.make('');
    anon.metadata = {};
    const missing = await call(file.base, 'POST', binding.collection(), anon);
    expect(missing.status).toBe(422);
    expect(causes(missing.body)).toEqual([['FieldValueRequired', 'metadata.name']]);
  });

  it('refuses a label change on a namespaced object only when it is invalid', async () => {
    const name = unique('evlabel');
    const created = (await call(file.base, 'POST', event.collection('default'), event.make(name))).body;
    const ok = await call(file.base, 'PUT', event.item(name), { ...created, metadata: { ...created.metadata, labels: { app: 'web' } } });
    expect(ok.status, ok.text).toBe(200);
    const bad = await call(file.base, 'PUT', event.item(name), { ...ok.body, metadata: { ...ok.body.metadata, labels: { app: 'has space' } } });
    expect(bad.status).toBe(422);
    expect(causes(bad.body)).toEqual([['FieldValueInvalid', 'metadata.labels']]);
  });
});
