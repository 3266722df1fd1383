/**
 * /debug/faults authorized as a non-resource path when authorization is on (RBAC: granted by verb on
 * nonResourceURLs, refused otherwise), and each injected fault annotated on the request's audit event.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config/server-config.js';
import { call, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

const G = 'rbac.authorization.orch.io';
const RULES = JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1alpha1', kind: 'FaultConfiguration', seed: 1, rules: [] });

describe('/debug/faults with authorization on', () => {
  it('is allowed to whoever RBAC grants the verb on the path, and refused to the rest', async () => {
    const dataDir = tempDir('orchd-faults-authz-');
    // Grant anonymous `get` (not `put`, not `delete`) on /debug/faults, while nothing is authorized yet.
    const open = await startServer({ dataDir });
    try {
      const role = await call(open.url, 'POST', `/apis/${G}/v1/clusterroles`, {
        apiVersion: `${G}/v1`,
        kind: 'ClusterRole',
        metadata: { name: 'fault-reader' },
        rules: [{ nonResourceURLs: ['/debug/faults'], verbs: ['get'] }],
      });
      expect(role.status, role.text).toBe(201);
      const binding = await call(open.url, 'POST', `/apis/${G}/v1/clusterrolebindings`, {
        apiVersion: `${G}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: 'fault-reader' },
        roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'fault-reader' },
        subjects: [{ apiGroup: G, kind: 'User', name: 'system:anonymous' }],
      });
      expect(binding.status, binding.text).toBe(201);
    } finally {
      await open.stop();
    }
    const file = join(dataDir, 'authz.yaml');
    await writeFile(file, JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'RBAC', name: 'rbac' }] }));
    const loaded = loadServerConfig({ authorization: file });
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
    const s = await startServer({ dataDir, config: loaded.config });
    try {
      expect((await call(s.url, 'GET', '/debug/faults')).status).toBe(200);
      const put = await call(s.url, 'PUT', '/debug/faults', RULES);
      expect(put.status).toBe(403);
      expect(put.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', message: 'forbidden: User "system:anonymous" cannot put path "/debug/faults"' });
      expect((await call(s.url, 'DELETE', '/debug/faults')).status).toBe(403);
    } finally {
      await s.stop();
    }
  });
});

describe('the audit log', () => {
  it('annotates the request a fault met with the rule and the fault', async () => {
    const dir = tempDir('orchd-faults-audit-');
    const log = join(dir, 'audit.log');
    const s = await startServer({
      auditLogPath: log,
      faults: { seed: 1, rules: [{ name: 'busy', match: { verbs: ['get'], resources: ['namespaces'], names: ['default'] }, first: 1, inject: { status: 429 } }] },
    });
    try {
      expect((await call(s.url, 'GET', '/api/v1/namespaces/default')).status).toBe(429);
      expect((await call(s.url, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      await s.stop();
    }
    const events = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.objectRef?.resource === 'namespaces' && e.objectRef?.name === 'default' && e.verb === 'get');
    expect(events.map((e) => [e.responseStatus.code, e.annotations?.['faults.orch.io/injected']])).toEqual([
      [429, 'busy: status:429'],
      [200, undefined],
    ]);
  });
});
