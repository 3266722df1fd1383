import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { run } from './helpers.js';
import { jsonLines } from '../helpers/json-lines.js';

/*
 * The kinds controllers touch besides their own (issue 43: core v1 ConfigMap, Secret, ServiceAccount
 * and Event, coordination.orch.io Lease) read back through the time-travel tools like every kind
 * served: by kubectl's names, from the server and from its data folder alike.
 */

let work: string;
let server: TestServer;
let before: number;

const OBJECTS: [string, Record<string, unknown>][] = [
  ['/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { mode: 'fast' } }],
  ['/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, stringData: { token: 'abc' } }],
  ['/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } }],
  ['/apis/coordination.orch.io/v1/namespaces/default/leases', { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } }],
];

beforeAll(async () => {
  work = tempDir('orchd-tt-core-kinds-');
  server = await startServer({ dataDir: join(work, 'data') });
  before = Number((await call(server.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
  for (const [path, body] of OBJECTS) {
    const r = await call(server.url, 'POST', path, body);
    expect(r.status, r.text).toBe(201);
  }
});

afterAll(async () => {
  await server?.close();
});

describe('the core kinds controllers touch, in time travel', () => {
  it('state and log read each by its kubectl name, from the server and the folder', async () => {
    for (const source of [
      ['--server', server.url],
      ['--data-dir', join(work, 'data')],
    ]) {
      const state = await run('state', ...source, '--at', 'HEAD', '-n', 'default', '--kind', 'cm,secrets,sa,leases', '-o', 'json');
      expect([state.code, state.err]).toEqual([0, '']);
      const objects = jsonLines<{ kind: string; metadata: { name: string }; data?: Record<string, string> }>(state.out);
      expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(['ConfigMap/settings', 'Lease/leader', 'Secret/token', 'ServiceAccount/robot']);
      // A Secret's stringData was merged into data on the write: the history holds the base64 form.
      expect(objects.find((o) => o.kind === 'Secret')?.data).toEqual({ token: Buffer.from('abc').toString('base64') });

      const log = await run('log', ...source, '--from', String(before + 1), '--kind', 'configmaps,leases.coordination.orch.io', '-o', 'json');
      expect([log.code, log.err]).toEqual([0, '']);
      const changes = jsonLines<{ type: string; object: { kind: string } }>(log.out);
      expect(changes.map((c) => `${c.type} ${c.object.kind}`)).toEqual(['ADDED ConfigMap', 'ADDED Lease']);
    }
  });

  it('a state before the objects were written holds none of them', async () => {
    const r = await run('state', '--data-dir', join(work, 'data'), '--at', String(before), '-n', 'default', '--kind', 'configmaps,secrets', '-o', 'json');
    expect([r.code, r.out]).toEqual([0, '']);
  });
});
