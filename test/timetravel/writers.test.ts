import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { run } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

/*
 * Who wrote an entry, as `orchd log` tells it, for a write to a subresource: a controller's status
 * write through /status is logged with its verb and the subresource, end to end (the request, the
 * log, the command), from the server and from its data folder alike.
 */

const VAP = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
let work: string;
let server: TestServer;
let created: number;
let statusWritten: number;

beforeAll(async () => {
  work = tempDir('orchd-writers-');
  server = await startServer({ dataDir: join(work, 'data') });
  const policy = {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'guard' },
    spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }] }, validations: [{ expression: 'true' }] },
  };
  const made = await call(server.url, 'POST', `${VAP}?fieldManager=policy-author`, policy);
  expect(made.status, made.text).toBe(201);
  created = Number(made.body.metadata.resourceVersion);
  const status = await call(server.url, 'PUT', `${VAP}/guard/status?fieldManager=policy-checker`, { ...made.body, status: { observedGeneration: 1 } });
  expect(status.status, status.text).toBe(200);
  statusWritten = Number(status.body.metadata.resourceVersion);
});

afterAll(async () => {
  await server?.close();
});

describe('orchd log names the subresource a write went through', () => {
  it('a /status write is logged as update of status, by its field manager, from the server and the folder', async () => {
    for (const source of [
      ['--server', server.url],
      ['--data-dir', join(work, 'data')],
    ]) {
      const r = await run('log', ...source, '--kind', 'vap', '-o', 'json');
      expect([r.code, r.err]).toEqual([0, '']);
      const lines = r.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => [Number(l.resourceVersion), l.type, l.writer])).toEqual([
        [created, 'ADDED', { user: 'system:anonymous', verb: 'create', manager: 'policy-author' }],
        [statusWritten, 'MODIFIED', { user: 'system:anonymous', verb: 'update', subresource: 'status', manager: 'policy-checker' }],
      ]);
    }
    const table = await run('log', '--data-dir', join(work, 'data'), '--kind', 'vap');
    expect(table.out.trim().split('\n').at(-1)).toMatch(new RegExp(`^${statusWritten}\\s.*\\sguard\\s+system:anonymous\\s+policy-checker \\(update/status\\)$`));
  });
});
