/**
 * The log's writer of a controller's write, on a real server (LevelDB in a temp folder) read back
 * through /debug/log: the system user with the verb and subresource of the write, as a client's
 * writes are recorded, so "who deleted X, and how" has an answer for the namespace cleanup, the
 * garbage collector and the CRD status controller too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/poll.js';
import { EVENTS, createEvent, createNamespace } from '../watch/objects.js';
import { crdOf } from '../helpers/crd.js';
import { jsonLines } from '../helpers/json-lines.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** Every entry of one key in the log, as /debug/log serves them. */
async function entriesOf(key: string): Promise<{ type: string; writer?: Record<string, string> }[]> {
  const r = await call(server.url, 'GET', '/debug/log?from=1');
  expect(r.status).toBe(200);
  return jsonLines(r.text).filter((e) => e.key === key);
}

const SYSTEM = 'system:apiserver';
const RBAC = '/apis/rbac.authorization.orch.io/v1';
const role = (name: string, more: Record<string, unknown> = {}) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name, ...more }, rules: [] });

describe('a controller write in the log', () => {
  it("namespace cleanup: the delete of what the namespace held is the system user's delete", async () => {
    await createNamespace(server.url, 'doomed');
    await createEvent(server.url, 'left', 'doomed');
    expect((await call(server.url, 'DELETE', '/api/v1/namespaces/doomed')).status).toBe(200);
    await eventually(async () => (await call(server.url, 'GET', `${EVENTS}/namespaces/doomed/events/left`)).status === 404);
    const entries = await entriesOf('events.orch.io/events/doomed/left');
    expect(entries.map((e) => [e.type, e.writer])).toEqual([
      ['ADDED', expect.objectContaining({ user: 'system:anonymous', verb: 'create' })],
      ['DELETED', { user: SYSTEM, verb: 'delete' }],
    ]);
  });

  it('garbage collector: a dependent of a deleted owner is deleted by the system user, verb delete', async () => {
    await createNamespace(server.url, 'gc');
    const owner = await call(server.url, 'POST', `${RBAC}/namespaces/gc/roles`, role('owner'));
    const ref = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', name: 'owner', uid: owner.body.metadata.uid };
    expect((await call(server.url, 'POST', `${RBAC}/namespaces/gc/roles`, role('dependent', { ownerReferences: [ref] }))).status).toBe(201);
    expect((await call(server.url, 'DELETE', `${RBAC}/namespaces/gc/roles/owner`)).status).toBe(200);
    await eventually(async () => (await call(server.url, 'GET', `${RBAC}/namespaces/gc/roles/dependent`)).status === 404);
    const entries = await entriesOf('rbac.authorization.orch.io/roles/gc/dependent');
    expect(entries.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(entries[1].writer).toEqual({ user: SYSTEM, verb: 'delete' });
  });

  it("CRD status: NamesAccepted and Established are the system user's update of the status subresource", async () => {
    const crd = crdOf('writers.example.com', 'widgets', 'Widget');
    expect((await call(server.url, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const key = 'apiextensions.orch.io/customresourcedefinitions//widgets.writers.example.com';
    await eventually(async () => (await entriesOf(key)).length > 1);
    const entries = await entriesOf(key);
    expect(entries[0].writer).toMatchObject({ user: 'system:anonymous', verb: 'create' });
    for (const e of entries.slice(1)) expect(e.writer).toEqual({ user: SYSTEM, verb: 'update', subresource: 'status' });
  });
});
