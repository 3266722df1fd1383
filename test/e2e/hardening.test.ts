/**
 * Bad input a careless client sends gets a 4xx Status, never a 500 (issue 18), and every create
 * with a fieldManager records who set what.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { KINDS, kindCase, rawCall, unique, warningsOf } from './support.js';

const file = serverForFile();

describe('an associative-list item without its key is a 422 with the field path', () => {
  it.each([
    ['Event', 'ownerReferences without uid', (o: any) => (o.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p' }]), 'metadata.ownerReferences.uid'],
    ['ValidatingAdmissionPolicy', 'matchConditions without name', (o: any) => (o.spec.matchConditions = [{ expression: 'true' }]), 'spec.matchConditions[0].name'],
  ])('%s: %s', async (kind, _n, mutate, field) => {
    const k = kindCase(kind);
    const name = unique('nokey');
    const o = k.make(name);
    mutate(o);
    for (const query of ['', '?fieldManager=tester']) {
      const r = await call(file.base, 'POST', k.collection(k.namespaced ? 'default' : undefined) + query, o);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid' });
      expect(r.body.details.causes.map((c: any) => c.field)).toContain(field);
    }
    // Updates and patches take the same path to the same answer.
    const created = await call(file.base, 'POST', k.collection(k.namespaced ? 'default' : undefined), k.make(name));
    expect(created.status).toBe(201);
    const next = structuredClone(created.body);
    mutate(next);
    const put = await call(file.base, 'PUT', k.item(name, k.namespaced ? 'default' : undefined), next);
    expect(put.status).toBe(422);
    expect(put.body.details.causes.map((c: any) => c.field)).toContain(field);
  });
});

describe('a create with fieldManager records a managedFields entry for every kind and body', () => {
  it.each(KINDS.map((k) => [`${k.kind} ${k.collection()}`, k] as const))('%s', async (_n, k) => {
    for (const strip of [false, true]) {
      const name = unique('mf');
      const o = k.make(name);
      // The fixture as it is, and with no labels or annotations (only what the kind requires).
      if (strip) o.metadata = { name };
      const r = await call(file.base, 'POST', k.collection(k.namespaced ? 'default' : undefined) + '?fieldManager=tester', o);
      expect(r.status).toBe(201);
      const entries = r.body.metadata.managedFields ?? [];
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ manager: 'tester', operation: 'Update', fieldsType: 'FieldsV1' });
      expect(Object.keys(entries[0].fieldsV1).length).toBeGreaterThan(0);
    }
  });
});

describe('a warning about a field named beyond Latin-1', () => {
  it('is sent as UTF-8 bytes in the Warning header (as kube-apiserver sends it), not a 500', async () => {
    const ev = kindCase('Event');
    const o = ev.make(unique('warn'));
    o['pr€ce'] = 1;
    o['naïve'] = 2;
    const r = await rawCall(file.base, 'POST', ev.collection('default'), JSON.stringify(o));
    expect(r.status).toBe(201);
    expect(r.body).not.toHaveProperty('pr€ce');
    // Node hands header bytes over as Latin-1; read them back as the UTF-8 they are.
    const warnings = warningsOf(r)
      .map((w) => Buffer.from(w, 'latin1').toString('utf8'))
      .sort();
    expect(warnings).toEqual(['299 - "unknown field \\"naïve\\""', '299 - "unknown field \\"pr€ce\\""']);
  });
});

describe('bad apply, patch, selector and Accept input is a 4xx, never a 500 (item 11)', () => {
  const vap = kindCase('ValidatingAdmissionPolicy');
  const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

  it('apply of a body that is not YAML, not an object, or lacks apiVersion or kind: 400, the object untouched', async () => {
    const name = unique('apply');
    const created = await call(file.base, 'POST', vap.collection(), vap.make(name));
    expect(created.status).toBe(201);
    const full = { ...vap.make(name), apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy' };
    const { apiVersion: _a, ...noApiVersion } = full;
    const { kind: _k, ...noKind } = full;
    const bodies: [string, string, RegExp][] = [
      ['not YAML', 'spec: [unclosed', /yaml/i],
      ['a scalar', 'just words', /is missing in/],
      ['a list', '- a\n- b', /is missing in/],
      ['binary', '\u0000\u0001\u0002', /is missing in|yaml/i],
      ['no apiVersion', JSON.stringify(noApiVersion), /^Incorrect version specified in apply patch\. Specified patch version: , expected: admissionregistration\.orch\.io\/v1$/],
      [
        'another version',
        JSON.stringify({ ...full, apiVersion: 'admissionregistration.orch.io/v1beta1' }),
        /^Incorrect version specified in apply patch\. Specified patch version: admissionregistration\.orch\.io\/v1beta1/,
      ],
      ['no kind', JSON.stringify(noKind), /^kind must be specified in an apply patch: expected ValidatingAdmissionPolicy$/],
    ];
    for (const [what, body, message] of bodies) {
      for (const target of [name, unique('apply-new')]) {
        const r = await call(file.base, 'PATCH', `${vap.item(target)}?fieldManager=tester`, body, APPLY);
        expect(r.status, `${what}: ${r.text}`).toBe(400);
        expect(r.body, what).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
        expect(r.body.message, what).toMatch(message);
      }
    }
    expect((await call(file.base, 'GET', vap.item(name))).body).toEqual(created.body);
    // The same configuration with both set applies.
    expect((await call(file.base, 'PATCH', `${vap.item(name)}?fieldManager=tester&force=true`, JSON.stringify(full), APPLY)).status).toBe(200);
  });

  it('a patch that removes metadata (JSON patch) or nulls it (merge patch): 422 naming metadata.name, as Kubernetes validates it', async () => {
    const name = unique('nometa');
    const created = await call(file.base, 'POST', vap.collection(), vap.make(name));
    for (const [type, body] of [
      ['application/json-patch+json', [{ op: 'remove', path: '/metadata' }]],
      ['application/json-patch+json', [{ op: 'replace', path: '/metadata', value: { labels: { a: 'b' } } }]],
      ['application/merge-patch+json', { metadata: null }],
      ['application/strategic-merge-patch+json', { metadata: null }],
    ] as const) {
      const r = await call(file.base, 'PATCH', vap.item(name), body, { 'Content-Type': type });
      expect(r.status, `${type} ${JSON.stringify(body)}: ${r.text}`).toBe(422);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid' });
      expect(r.body.details.causes.map((c: any) => c.field)).toContain('metadata.name');
    }
    expect((await call(file.base, 'GET', vap.item(name))).body).toEqual(created.body);
  });

  it('`a notin ()` is what Kubernetes parses it as (not in the set holding the empty value), and `a notin (` a 400', async () => {
    const run = unique('notin');
    const labels: Record<string, Record<string, string>> = { [`${run}-set`]: { run, a: 'x' }, [`${run}-empty`]: { run, a: '' }, [`${run}-none`]: { run } };
    for (const [name, l] of Object.entries(labels)) {
      const o = vap.make(name);
      o.metadata.labels = l;
      expect((await call(file.base, 'POST', vap.collection(), o)).status).toBe(201);
    }
    const names = async (selector: string) => {
      const r = await call(file.base, 'GET', `${vap.collection()}?labelSelector=${encodeURIComponent(`run=${run},${selector}`)}`);
      expect(r.status, r.text).toBe(200);
      return r.body.items.map((o: any) => o.metadata.name).sort();
    };
    // Kubernetes' labels.Parse reads `()` as the set {""} (its grammar's own example is `z notin ()`).
    expect(await names('a notin ()')).toEqual([`${run}-none`, `${run}-set`]);
    expect(await names('a in ()')).toEqual([`${run}-empty`]);
    const bad = await call(file.base, 'GET', `${vap.collection()}?labelSelector=${encodeURIComponent('a notin (')}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });

  it('an Accept of a Table orchd cannot serve, with no fallback: 406; with a fallback, the fallback', async () => {
    for (const accept of ['application/json;as=Table;v=v2;g=meta.k8s.io', 'application/json;as=Table;v=v1;g=meta.orch.io', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io']) {
      for (const path of [vap.collection(), vap.item('fuzz-none')]) {
        const r = await call(file.base, 'GET', path, undefined, { Accept: accept });
        expect(r.status, `${accept} ${path}: ${r.text}`).toBe(406);
        expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
      }
    }
    const fallback = await call(file.base, 'GET', vap.collection(), undefined, { Accept: 'application/json;as=Table;v=v2;g=meta.k8s.io, application/json' });
    expect(fallback.status).toBe(200);
    expect(fallback.body.kind).toBe('ValidatingAdmissionPolicyList');
  });
});
