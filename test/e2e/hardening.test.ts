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
    const warnings = warningsOf(r).map((w) => Buffer.from(w, 'latin1').toString('utf8')).sort();
    expect(warnings).toEqual(['299 - "unknown field \\"naïve\\""', '299 - "unknown field \\"pr€ce\\""']);
  });
});
