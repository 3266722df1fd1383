/**
 * The kinds controllers write besides their own, on a real orchd over HTTP: core v1 ConfigMap,
 * Secret, ServiceAccount and Event, and coordination.orch.io/v1 Lease, with kube-apiserver's
 * validation, defaults and update rules, watches, and discovery.
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';

const file = serverForFile();
const CORE = '/api/v1/namespaces/default';
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('Secret', () => {
  it('stringData is merged into data as base64 (winning over it) and never stored; type defaults to Opaque', async () => {
    const r = await call(file.base, 'POST', `${CORE}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1' },
      data: { a: b64('old'), b: b64('kept') },
      stringData: { a: 'new', c: 'plain' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: 'Opaque', data: { a: b64('new'), b: b64('kept'), c: b64('plain') } });
    expect(r.body.stringData).toBeUndefined();
    const got = (await call(file.base, 'GET', `${CORE}/secrets/s1`)).body;
    expect(got.stringData).toBeUndefined();
    // On update too, a merge patch of stringData included.
    const patched = await call(file.base, 'PATCH', `${CORE}/secrets/s1`, { stringData: { d: 'x' } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.body.data).toMatchObject({ d: b64('x'), a: b64('new') });
  });

  it.each([
    ['a key that is no file name', { data: { 'a/b': b64('x') } }, 'data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters'],
    ['tls without its keys', { type: 'kubernetes.io/tls', data: {} }, '[data[tls.crt]: Required value, data[tls.key]: Required value]'],
    ['basic-auth with neither key', { type: 'kubernetes.io/basic-auth' }, '[data[username]: Required value, data[password]: Required value]'],
    ['a service-account token without its account', { type: 'kubernetes.io/service-account-token' }, 'metadata.annotations[kubernetes.io/service-account.name]: Required value'],
    ['dockerconfigjson that is not JSON', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{') } }, 'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>"'],
  ])('422 for %s', async (_what, body, message) => {
    const r = await call(file.base, 'POST', `${CORE}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad' }, ...body });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(`Secret "bad" is invalid: ${message}`);
  });

  it('data that is not base64 is a 400 from decoding, as kube-apiserver answers it', async () => {
    const r = await call(file.base, 'POST', `${CORE}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad' }, data: { a: 'not base64!' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Secret in version "v1" cannot be handled as a Secret: data\[a\]/);
  });

  it('type is immutable; an immutable Secret keeps its data and the flag', async () => {
    const created = (await call(file.base, 'POST', `${CORE}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'frozen' }, data: { a: b64('1') }, immutable: true })).body;
    const retyped = await call(file.base, 'PUT', `${CORE}/secrets/frozen`, { ...created, type: 'example.com/other' });
    expect(retyped.status).toBe(422);
    expect(retyped.body.message).toContain('type: Invalid value: "example.com/other": field is immutable');
    const changed = await call(file.base, 'PUT', `${CORE}/secrets/frozen`, { ...created, data: { a: b64('2') }, immutable: false });
    expect(changed.status).toBe(422);
    expect(changed.body.message).toBe('Secret "frozen" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]');
    const labelled = await call(file.base, 'PUT', `${CORE}/secrets/frozen`, { ...created, metadata: { ...created.metadata, labels: { ok: 'yes' } } });
    expect(labelled.status).toBe(200);
  });
});

describe('ConfigMap', () => {
  it('data, binaryData (base64), immutable, and kube-apiserver refusals', async () => {
    const ok = await call(file.base, 'POST', `${CORE}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: { 'app.conf': 'x=1' },
      binaryData: { blob: b64('\u0000\u0001') },
    });
    expect(ok.status).toBe(201);
    const dup = await call(file.base, 'POST', `${CORE}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dup' }, data: { k: 'a', '..x': 'b' }, binaryData: { k: b64('a') } });
    expect(dup.status).toBe(422);
    expect(dup.body.details.causes.map((c: any) => [c.field, c.message])).toEqual([
      ['data[..x]', 'Invalid value: "..x": must not start with \'..\''],
      ['binaryData[k]', 'Invalid value: "k": duplicate of key present in data'],
    ]);
    const big = await call(file.base, 'POST', `${CORE}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } });
    expect(big.status).toBe(422);
    expect(big.body.message).toBe('ConfigMap "big" is invalid: : Too long: may not be more than 1048576 bytes');
  });
});

describe('ServiceAccount, core Event, Lease', () => {
  it('a ServiceAccount: created, listed, deleted', async () => {
    expect((await call(file.base, 'POST', `${CORE}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' }, automountServiceAccountToken: false })).status).toBe(201);
    expect((await call(file.base, 'GET', `${CORE}/serviceaccounts`)).body.items.map((o: any) => o.metadata.name)).toContain('bot');
    expect((await call(file.base, 'DELETE', `${CORE}/serviceaccounts/bot`)).status).toBe(200);
  });

  it('a core Event as client-go records it; its legacy checks in its own field names', async () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Certificate', namespace: 'default', name: 'web', apiVersion: 'cert-manager.io/v1' },
      reason: 'Issued',
      message: 'issued',
      type: 'Normal',
      source: { component: 'cert-manager' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:00Z',
      count: 1,
    };
    expect((await call(file.base, 'POST', `${CORE}/events`, ev)).status).toBe(201);
    const bumped = await call(file.base, 'PATCH', `${CORE}/events/web.1`, { count: 2 }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    expect(bumped.body.count).toBe(2);
    const selected = await call(file.base, 'GET', `${CORE}/events?fieldSelector=involvedObject.name%3Dweb,reason%3DIssued`);
    expect(selected.body.items.map((o: any) => o.metadata.name)).toEqual(['web.1']);
    const wrongNs = await call(file.base, 'POST', `${CORE}/events`, { ...ev, metadata: { name: 'x' }, involvedObject: { ...ev.involvedObject, namespace: 'other' } });
    expect(wrongNs.body.message).toBe('Event "x" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace');
    const newStyle = await call(file.base, 'POST', `${CORE}/events`, { ...ev, metadata: { name: 'y' }, eventTime: '2026-01-01T00:00:00.000000Z' });
    expect(newStyle.body.details.causes.map((c: any) => c.field)).toEqual(['reportingComponent', 'reportingComponent', 'reportingComponent', 'reportingInstance', 'action']);
  });

  it('a Lease: PUT may create it, an update must carry its resourceVersion, two candidates do not both win', async () => {
    const lease = (holder: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'leader' }, spec: { holderIdentity: holder, leaseDurationSeconds: 15 } });
    const created = await call(file.base, 'PUT', `${LEASES}/leader`, lease('a'));
    expect(created.status).toBe(201);
    const unconditional = await call(file.base, 'PUT', `${LEASES}/leader`, lease('b'));
    expect(unconditional.status).toBe(422);
    expect(unconditional.body.message).toBe('leases.coordination.orch.io "leader" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    const rv = created.body.metadata.resourceVersion;
    const [b, c] = await Promise.all(['b', 'c'].map((h) => call(file.base, 'PUT', `${LEASES}/leader`, { ...lease(h), metadata: { name: 'leader', resourceVersion: rv } })));
    expect([b.status, c.status].sort()).toEqual([200, 409]);
    const bad = await call(file.base, 'POST', LEASES, { ...lease('a'), metadata: { name: 'bad' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } });
    expect(bad.body.message).toBe(
      'Lease.coordination.orch.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
    );
  });

  it('discovery serves them', async () => {
    const core = (await call(file.base, 'GET', '/api/v1')).body.resources.map((r: any) => r.name);
    expect(core).toEqual(expect.arrayContaining(['configmaps', 'secrets', 'serviceaccounts', 'events']));
    const coordination = (await call(file.base, 'GET', '/apis/coordination.orch.io/v1')).body.resources.map((r: any) => r.name);
    expect(coordination).toContain('leases');
  });

  it('a watch of Secrets sees the write, stringData already merged', async () => {
    const list = await call(file.base, 'GET', `${CORE}/secrets`);
    const controller = new AbortController();
    const res = await fetch(`${file.base}${CORE}/secrets?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await call(file.base, 'POST', `${CORE}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'watched' }, stringData: { k: 'v' } });
    let text = '';
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const event = JSON.parse(text.split('\n')[0]);
    expect(event).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'watched' }, data: { k: b64('v') }, type: 'Opaque' } });
    expect(event.object.stringData).toBeUndefined();
  });
});
