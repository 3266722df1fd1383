/**
 * Validation ratcheting on a real orchd, with kubectl: a CRD's schema and rules are tightened after
 * an object was stored; `kubectl label` on it is accepted (it leaves the invalid values as they
 * were), an edit of an invalid value is refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crdOf } from '../helpers/crd.js';
import { kubectlHome, type KubectlHome } from '../helpers/kubectl.js';
import { eventually } from '../helpers/poll.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const merge = { 'Content-Type': 'application/merge-patch+json' };

let server: TestServer;
let home: KubectlHome;
beforeAll(async () => {
  server = await startServer();
  home = await kubectlHome(server.url);
});
afterAll(async () => {
  await home?.remove();
  await server?.stop();
});

const schemaWith = (spec: object, rules: object[] = []) => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: spec, 'x-kubernetes-validations': rules } },
});

it('kubectl label on an object stored before its schema was tightened', async () => {
  const loose = schemaWith({ name: { type: 'string' }, replicas: { type: 'integer' } });
  expect((await call(server.url, 'POST', CRDS, crdOf('example.com', 'widgets', 'Widget', { schema: loose }))).status).toBe(201);
  await eventually(async () => (await call(server.url, 'GET', WIDGETS)).status === 200, { what: 'widgets served' });
  const w = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'old' }, spec: { name: 'a-very-long-name', replicas: 9 } };
  expect((await call(server.url, 'POST', WIDGETS, w)).status).toBe(201);

  const strict = schemaWith({ name: { type: 'string', maxLength: 5 }, replicas: { type: 'integer' } }, [{ rule: 'self.replicas <= 3', message: 'at most 3' }]);
  const tightened = await call(server.url, 'PATCH', `${CRDS}/widgets.example.com`, { spec: { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: strict } }] } }, merge);
  expect(tightened.status).toBe(200);
  // The new schema is in force once a new object is refused by it.
  await eventually(async () => (await call(server.url, 'POST', WIDGETS, { ...w, metadata: { name: 'new' } })).status === 422, { what: 'the tightened schema' });

  const r = await home.kubectl(['label', 'widgets.example.com/old', '-n', 'default', 'team=a']);
  expect(r).toMatchObject({ code: 0, stdout: 'widget.example.com/old labeled\n' });

  const edit = await call(server.url, 'PATCH', `${WIDGETS}/old`, { spec: { name: 'another-long-name' } }, merge);
  expect(edit.status).toBe(422);
  expect(edit.body.message).toBe(
    'Widget.example.com "old" is invalid: [spec.name: Too long: may not be more than 5 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
  );
  // A valid name: now the rule on the changed spec runs, and replicas 9 is refused.
  const rule = await call(server.url, 'PATCH', `${WIDGETS}/old`, { spec: { name: 'ok' } }, merge);
  expect(rule.status).toBe(422);
  expect(rule.body.message).toBe('Widget.example.com "old" is invalid: spec: Invalid value: at most 3');
});
