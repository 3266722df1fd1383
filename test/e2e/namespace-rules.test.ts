/**
 * Namespace rules that Kubernetes enforces outside the kinds' validation: there is no collection
 * DELETE for Namespaces (discovery says so too), and a missing namespace is reported before the
 * object's own validation runs (NamespaceLifecycle admission comes first).
 */
import { describe, expect, it } from 'vitest';
import { call, serverForFile } from '../helpers/server.js';
import { kindCase, unique } from './support.js';

const file = serverForFile();

describe('namespace rules', () => {
  it('answers 405 to DELETE /api/v1/namespaces and deletes nothing, dry run or not', async () => {
    for (const q of ['', '?dryRun=All']) {
      const r = await call(file.base, 'DELETE', `/api/v1/namespaces${q}`);
      expect(r.status).toBe(405);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    }
    expect((await call(file.base, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('leaves deletecollection out of the Namespace verbs in discovery, and keeps it for other kinds', async () => {
    const core = (await call(file.base, 'GET', '/api/v1')).body.resources;
    expect(core.find((r: any) => r.name === 'namespaces').verbs).not.toContain('deletecollection');
    const adm = (await call(file.base, 'GET', '/apis/admissionregistration.orch.io/v1')).body.resources;
    expect(adm.find((r: any) => r.name === 'validatingadmissionpolicies').verbs).toContain('deletecollection');
  });

  it('reports a missing namespace (404) before an invalid object (422)', async () => {
    const event = kindCase('Event');
    const missing = unique('missing');
    const invalid = event.make(unique('ev'));
    delete invalid.reportingController;
    const r = await call(file.base, 'POST', event.collection(missing), invalid);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ reason: 'NotFound', message: `namespaces "${missing}" not found` });
  });
});
