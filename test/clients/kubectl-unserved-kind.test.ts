/**
 * kubectl on a kind no CRD serves answers as against kube-apiserver: "no matches for kind … in
 * version …". When the kind's group-version is served (another kind's CRD) but its OpenAPI has no
 * such kind, kubectl asks whether a CRD defines it by listing
 * /apis/apiextensions.k8s.io/v1/customresourcedefinitions (cli-runtime's CRDFromDynamic); a 404
 * there was "failed to check CRD: failed to list CRDs" (src/http/router.ts, KUBECTL_CRD_LIST).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyKubectl, kubectlHome, limiter } from '../helpers/kubectl.js';
import { crdOf } from '../helpers/crd.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/poll.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const slot = limiter(2);
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  // Gadgets are served in example.com/v1; Widgets, in the same group-version, are not.
  expect((await call(server.url, 'POST', CRDS, crdOf('example.com', 'gadgets', 'Gadget'))).status).toBe(201);
  await eventually(async () => (await call(server.url, 'GET', '/apis/example.com/v1/gadgets')).status === 200, { what: 'gadgets served' });
});
afterAll(async () => {
  await server?.stop();
});

const widget = (ns: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: ${ns}\nspec: {}\n`;
const noMatch = (ns: string) =>
  `error: resource mapping not found for name: "w" namespace: "${ns}" from "STDIN": no matches for kind "Widget" in version "example.com/v1"\nensure CRDs are installed first\n`;

describe('kubectl apply of a kind no CRD serves', () => {
  for (const { label, path } of everyKubectl()) {
    it.concurrent(`${label}: "no matches for kind", client-side and server-side`, { timeout: 60_000 }, () =>
      slot(async () => {
        const home = await kubectlHome(server.url, { binary: path });
        try {
          for (const mode of [[], ['--server-side']]) {
            const r = await home.kubectl(['apply', ...mode, '-f', '-'], widget('default'));
            expect(r.code).toBe(1);
            expect(r.stderr).toBe(noMatch('default'));
          }
        } finally {
          await home.remove();
        }
      }),
    );
  }
});

describe('the CRD list kubectl hard-codes', () => {
  it('lists the CRDs, and refuses writes', async () => {
    const list = await call(server.url, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: any) => c.metadata.name)).toContain('gadgets.example.com');
    const post = await call(server.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdOf('example.com', 'things', 'Thing'));
    expect(post.status).toBe(405);
    expect((await call(server.url, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')).status).toBe(404);
    const groups = (await call(server.url, 'GET', '/apis')).body.groups.map((g: any) => g.name);
    expect(groups).not.toContain('apiextensions.k8s.io');
  });
});
