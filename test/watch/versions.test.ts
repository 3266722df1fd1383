/**
 * Watchers of one kind at different versions share a change's encoding only where the bytes are the
 * same: a MutatingAdmissionPolicy written at v1 reaches a v1beta1 watcher stamped v1beta1, whichever
 * watcher the server encoded the change for first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { currentVersion } from './objects.js';
import { HttpWatch, WsWatch } from './stream.js';

const GROUP = '/apis/admissionregistration.orch.io';
let srv: TestServer;
const open: { abort(): void }[] = [];
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  for (const w of open) w.abort();
  await srv?.stop();
});

const policy = (name: string) => ({
  apiVersion: 'admissionregistration.orch.io/v1',
  kind: 'MutatingAdmissionPolicy',
  metadata: { name },
  spec: {
    matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
    mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"x": "y"}}}' } }],
    reinvocationPolicy: 'Never',
  },
});

describe('watchers of different versions of one kind', () => {
  // First: the other test's v1 watchers stay open until the file ends, and they do encode v1.
  it("a watcher of another version alone does not make (nor keep) the stored version's JSON", async () => {
    const from = await currentVersion(srv.url);
    const w = await HttpWatch.open(srv.url, `${GROUP}/v1beta1/mutatingadmissionpolicies?watch=true&resourceVersion=${from}`);
    open.push(w);
    const r = await call(srv.url, 'POST', `${GROUP}/v1/mutatingadmissionpolicies`, policy('alone.example.com'));
    expect(r.status).toBe(201);
    const [added] = await w.count(1);
    expect([added.type, added.object.apiVersion, added.object.metadata.name]).toEqual(['ADDED', 'admissionregistration.orch.io/v1beta1', 'alone.example.com']);
    const { objects, kinds } = srv.api.context;
    const kind = kinds.find((k) => k.plural === 'mutatingadmissionpolicies')!;
    const stored = objects.current(kind, undefined, 'alone.example.com');
    expect(stored?.obj.apiVersion).toBe('admissionregistration.orch.io/v1');
    expect(stored?.json).toBeUndefined();
  });

  it('each receive the change stamped with their own apiVersion, over HTTP and WebSocket', async () => {
    const from = await currentVersion(srv.url);
    const path = (v: string) => `${GROUP}/${v}/mutatingadmissionpolicies?watch=true&resourceVersion=${from}`;
    const ws = (v: string) => WsWatch.open(srv.url.replace(/^http/, 'ws') + path(v));
    // The v1 watchers first, so the v1 encoding is made (and would be cached) before the others ask.
    const watchers = [
      { v: 'v1', w: await HttpWatch.open(srv.url, path('v1')) },
      { v: 'v1', w: await ws('v1') },
      { v: 'v1beta1', w: await HttpWatch.open(srv.url, path('v1beta1')) },
      { v: 'v1beta1', w: await ws('v1beta1') },
      { v: 'v1alpha1', w: await HttpWatch.open(srv.url, path('v1alpha1')) },
    ];
    open.push(...watchers.map((x) => x.w));
    const r = await call(srv.url, 'POST', `${GROUP}/v1/mutatingadmissionpolicies`, policy('versions.example.com'));
    expect(r.status).toBe(201);
    await call(srv.url, 'DELETE', `${GROUP}/v1/mutatingadmissionpolicies/versions.example.com`);
    for (const { v, w } of watchers) {
      const events = await w.count(2);
      expect(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name])).toEqual([
        ['ADDED', `admissionregistration.orch.io/${v}`, 'versions.example.com'],
        ['DELETED', `admissionregistration.orch.io/${v}`, 'versions.example.com'],
      ]);
    }
  });
});
