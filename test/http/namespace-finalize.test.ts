/**
 * A Namespace's /finalize subresource, as kube-apiserver serves it: PUT only, and it writes only
 * spec.finalizers. It is how people free a namespace stuck in Terminating
 * (`kubectl replace --raw /api/v1/namespaces/NAME/finalize -f -`), so it is tested with kubectl.
 */
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { kubectlForFile } from '../helpers/kubectl.js';
import { eventually } from '../helpers/poll.js';

const session = kubectlForFile();
const base = () => session.server.url;

describe('namespaces/{name}/finalize', () => {
  it('frees a namespace stuck in Terminating when kubectl replaces its finalizers', async () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stuck' }, spec: { finalizers: ['kubernetes', 'example.com/hold'] } };
    expect((await call(base(), 'POST', '/api/v1/namespaces', ns)).status).toBe(201);
    expect((await call(base(), 'DELETE', '/api/v1/namespaces/stuck')).status).toBe(200);
    // The namespace controller removes its own finalizer; the other holds the namespace.
    await eventually(async () => JSON.stringify((await call(base(), 'GET', '/api/v1/namespaces/stuck')).body.spec?.finalizers) === '["example.com/hold"]', {
      what: 'the kubernetes finalizer removed',
    });
    const got = await session.kubectl(['get', 'namespace', 'stuck', '-o', 'json']);
    expect(got.code).toBe(0);
    const freed = JSON.parse(got.stdout);
    freed.spec.finalizers = [];
    const put = await session.kubectl(['replace', '--raw', '/api/v1/namespaces/stuck/finalize', '-f', '-'], JSON.stringify(freed));
    expect(put.stderr).toBe('');
    expect(put.code).toBe(0);
    await eventually(async () => (await call(base(), 'GET', '/api/v1/namespaces/stuck')).status === 404, { what: 'the namespace gone' });
  });

  it('writes only spec.finalizers, and only by PUT', async () => {
    expect((await call(base(), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' } })).status).toBe(201);
    const cur = (await call(base(), 'GET', '/api/v1/namespaces/fin')).body;
    const put = await call(base(), 'PUT', '/api/v1/namespaces/fin/finalize', { ...cur, metadata: { ...cur.metadata, labels: { ignored: 'yes' } }, spec: { finalizers: ['example.com/x'] } });
    expect(put.status).toBe(200);
    expect(put.body.spec.finalizers).toEqual(['example.com/x']);
    expect(put.body.metadata.labels?.ignored).toBeUndefined();
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const r = await call(base(), method, '/api/v1/namespaces/fin/finalize', method === 'PATCH' ? {} : undefined, method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {});
      expect([method, r.status, r.body.reason]).toEqual([method, 405, 'MethodNotAllowed']);
    }
    // Only a Namespace has it.
    expect((await call(base(), 'PUT', '/api/v1/namespaces/default/configmaps/x/finalize', {})).status).toBe(404);
  });

  it('is listed in discovery with the update verb', async () => {
    const list = (await call(base(), 'GET', '/api/v1')).body;
    expect(list.resources.find((r: { name: string }) => r.name === 'namespaces/finalize')).toMatchObject({ kind: 'Namespace', verbs: ['update'] });
  });
});
