/**
 * python3-kubernetes (the Debian package, run by /usr/bin/python3) against a real orchd: the dynamic
 * client (discovery, then create/get/list/replace/delete and a watch that sends `watch=True`),
 * CustomObjectsApi with watch.Watch ending by timeout_seconds, and an Event in namespace default.
 * python/crud_watch.py does the calls and prints what it saw; this file asserts on it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./python/crud_watch.py', import.meta.url));

describe('python3-kubernetes', () => {
  let server: TestServer;
  let cacheDir: string;
  let out: any;

  beforeAll(async () => {
    server = await startServer();
    cacheDir = tempDir('orchd-py-');
    // The script's two watches end by the server closing them (2 s and 1 s); 60 s bounds a hang.
    const { stdout } = await run(PYTHON, [SCRIPT, server.url, cacheDir], {
      timeout: 60_000,
      env: { ...process.env, HOME: cacheDir, KUBECONFIG: join(cacheDir, 'none') },
    });
    out = JSON.parse(stdout);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('discovers our kinds through /apis and the group-version documents', () => {
    expect(out.discovered.vap).toEqual({
      name: 'validatingadmissionpolicies',
      namespaced: false,
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    });
    expect(out.discovered.event).toEqual({ name: 'events', namespaced: true, shortNames: ['ev'] });
  });

  it('creates, gets, lists and replaces a ValidatingAdmissionPolicy', () => {
    expect(out.created).toMatchObject({
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'py-demo', labels: { client: 'python' }, generation: 1 },
      spec: { failurePolicy: 'Fail', validations: [{ expression: 'object.spec.replicas <= 5', message: 'at most 5' }] },
    });
    expect(Number(out.created.metadata.resourceVersion)).toBeGreaterThan(Number(out.startRv));
    expect(out.got).toEqual(out.created);
    expect(out.listed).toEqual({
      kind: 'ValidatingAdmissionPolicyList',
      apiVersion: 'admissionregistration.orch.io/v1',
      names: ['py-demo'],
      resourceVersion: out.created.metadata.resourceVersion,
    });
    expect(out.replaced.metadata).toMatchObject({ uid: out.created.metadata.uid, generation: 2 });
    expect(Number(out.replaced.metadata.resourceVersion)).toBeGreaterThan(Number(out.created.metadata.resourceVersion));
    expect(out.replaced.spec.validations[0].expression).toBe('object.spec.replicas <= 7');
  });

  it('surfaces Conflict and NotFound as ApiException with a v1 Status body', () => {
    expect(out.staleReplace.status).toBe(409);
    expect(out.staleReplace.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409 });
    expect(out.missing.status).toBe(404);
    expect(out.missing.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      reason: 'NotFound',
      code: 404,
      // As Kubernetes' NewNotFound: the details name the resource (plural), not the kind.
      details: { name: 'no-such-policy', group: 'admissionregistration.orch.io', kind: 'validatingadmissionpolicies' },
    });
  });

  it('deletes', () => {
    expect(out.deleted).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'py-demo', uid: out.created.metadata.uid } });
  });

  it('watches with watch=True from a resourceVersion: ADDED, MODIFIED, DELETED, then ends by timeout', () => {
    expect(out.dynamicWatch).toEqual([
      { type: 'ADDED', name: 'py-demo', rv: out.created.metadata.resourceVersion },
      { type: 'MODIFIED', name: 'py-demo', rv: out.replaced.metadata.resourceVersion },
      { type: 'DELETED', name: 'py-demo', rv: expect.any(String) },
    ]);
    expect(Number(out.dynamicWatch[2].rv)).toBeGreaterThan(Number(out.replaced.metadata.resourceVersion));
  });

  it('watch.Watch over CustomObjectsApi starts with ADDED for what exists and ends by timeout_seconds', () => {
    expect(out.customWatch).toEqual([
      { type: 'ADDED', name: 'py-a' },
      { type: 'ADDED', name: 'py-b' },
    ]);
  });

  it('lists and watches every namespace at namespace "" (namespaces//events)', () => {
    expect(out.everyNamespace.created).toHaveLength(2);
    expect(out.everyNamespace.listed).toEqual(out.everyNamespace.created);
    expect(out.everyNamespace.watched).toEqual(out.everyNamespace.created);
  });

  it('creates an Event in namespace default and pages the list with limit=1', () => {
    expect(out.event).toMatchObject({
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { namespace: 'default', generateName: 'py-' },
      reason: 'Created',
      note: 'from python',
    });
    expect(out.event.metadata.name).toMatch(/^py-[a-z0-9]{5}$/);
    expect(out.eventPage).toEqual({ kind: 'EventList', names: [out.event.metadata.name] });
  });

  it('round-trips a Namespace through the typed CoreV1Api and watches it', () => {
    expect(out.namespace).toEqual({
      phase: 'Active',
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/),
      replacedLabels: { team: 'py', tier: 'gold', 'kubernetes.io/metadata.name': 'py-ns' },
      replacedCreated: out.namespace.created,
      // kube-apiserver answers a namespace delete with the Namespace, Terminating (python reads it as a V1Status).
      deleted: "{'phase': 'Terminating'}",
      watch: expect.any(Array),
    });
    expect(out.namespace.watch.slice(0, 2)).toEqual([
      ['ADDED', 'py-ns', 'Active'],
      ['MODIFIED', 'py-ns', 'Active'],
    ]);
    // The delete shows as DELETED, or (if the namespace is finalized later, as Kubernetes does) as Terminating.
    const [type, name, phase] = out.namespace.watch.at(-1);
    expect(name).toBe('py-ns');
    expect(type === 'DELETED' || phase === 'Terminating').toBe(true);
  });
});
