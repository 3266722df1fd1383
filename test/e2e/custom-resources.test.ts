/**
 * CustomResourceDefinitions end to end over HTTP on a real orchd (LevelDB in a temp folder): a CRD's
 * kind is served from the moment its create is answered, discovery and OpenAPI follow it as it comes
 * and goes, a bad CRD is one 422 and serves nothing, names taken are refused, and the custom
 * resources get what every kind gets (watches with bookmarks, Exact reads, status and scale,
 * Tables, field selectors, fieldValidation), a deleted CRD takes its objects with it, and a restart
 * serves them again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { crdOf as crdWith } from '../helpers/crd.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

function crdOf(group: string, plural: string, kind: string, more: Record<string, unknown> = {}): any {
  return crdWith(group, plural, kind, {
    spec: more,
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        selectableFields: [{ jsonPath: '.spec.colour' }],
        additionalPrinterColumns: [{ name: 'Colour', type: 'string', jsonPath: '.spec.colour' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { colour: { type: 'string' }, replicas: { type: 'integer', default: 1 } } },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } },
            },
          },
        },
      },
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
    ],
  });
}

const crd = crdOf('toys.example.com', 'robots', 'Robot');
const ROBOTS = '/apis/toys.example.com/v1/namespaces/default/robots';
const robot = (name: string, spec: Record<string, unknown> = { colour: 'red' }) => ({ apiVersion: 'toys.example.com/v1', kind: 'Robot', metadata: { name }, spec });

let server: TestServer;
let dataDir: string;
const base = () => server.url;
beforeAll(async () => {
  dataDir = tempDir('orchd-crd-');
  server = await startServer({ dataDir, bookmarkIntervalMs: 200 });
});
afterAll(async () => {
  await server?.stop();
});

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 10_000; ; await sleep(10)) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not so after 10 s: ${JSON.stringify(v).slice(0, 500)}`);
  }
}

describe('a CRD comes and goes', () => {
  it('serves its kind as soon as its create is answered, then is Established with its names accepted', async () => {
    expect((await call(base(), 'GET', '/apis/toys.example.com/v1')).status).toBe(404);
    const created = await call(base(), 'POST', CRDS, crd);
    expect(created.status).toBe(201);
    expect(created.body.status).toEqual({ storedVersions: ['v1'] });
    // No wait: the kind is served from the commit of the CRD on.
    const r = await call(base(), 'POST', ROBOTS, robot('r1'));
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({ colour: 'red', replicas: 1 });
    const established = await until(
      'Established',
      () => call(base(), 'GET', `${CRDS}/robots.toys.example.com`),
      (g) => (g.body.status.conditions ?? []).length === 2,
    );
    expect(established.body.status.conditions.map((c: any) => [c.type, c.status, c.reason])).toEqual([
      ['NamesAccepted', 'True', 'NoConflicts'],
      ['Established', 'True', 'InitialNamesAccepted'],
    ]);
    expect(established.body.status.acceptedNames).toEqual({ plural: 'robots', singular: 'robot', kind: 'Robot', listKind: 'RobotList' });
  });

  it('is in discovery (aggregated and legacy) and OpenAPI (v2 and v3) while it is served', async () => {
    const aggregated = await call(base(), 'GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const group = aggregated.body.items.find((g: any) => g.metadata.name === 'toys.example.com');
    expect(group.versions.map((v: any) => v.version)).toEqual(['v1', 'v1beta1']);
    expect(group.versions[0].resources[0]).toMatchObject({
      resource: 'robots',
      responseKind: { group: 'toys.example.com', version: 'v1', kind: 'Robot' },
      scope: 'Namespaced',
      subresources: [
        { subresource: 'status', responseKind: { group: 'toys.example.com', version: 'v1', kind: 'Robot' } },
        { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
      ],
    });
    // Each version with its own subresources: v1beta1 has none.
    expect(group.versions[1].resources[0].subresources).toBeUndefined();
    const legacy = await call(base(), 'GET', '/apis/toys.example.com/v1');
    expect(legacy.body.resources.map((r: any) => r.name)).toEqual(['robots', 'robots/scale', 'robots/status']);
    const index = await call(base(), 'GET', '/openapi/v3');
    const link = index.body.paths['apis/toys.example.com/v1'].serverRelativeURL;
    const v3 = await call(base(), 'GET', link);
    const def = v3.body.components.schemas['com.example.toys.v1.Robot'];
    expect(def['x-kubernetes-group-version-kind']).toEqual([{ group: 'toys.example.com', version: 'v1', kind: 'Robot' }]);
    expect(def.properties.spec.properties.replicas).toMatchObject({ type: 'integer', default: 1 });
    const v2 = await call(base(), 'GET', '/openapi/v2');
    expect(Object.keys(v2.body.definitions)).toEqual(expect.arrayContaining(['com.example.toys.v1.Robot', 'com.example.toys.v1beta1.Robot']));
  });

  it("serves each version by the object's apiVersion (conversion None)", async () => {
    const old = await call(base(), 'GET', '/apis/toys.example.com/v1beta1/namespaces/default/robots/r1');
    expect(old.body).toMatchObject({ apiVersion: 'toys.example.com/v1beta1', kind: 'Robot', spec: { colour: 'red' } });
  });

  it('refuses names another CRD of the group holds (KindConflict), and serves nothing of it', async () => {
    const clash = crdOf('toys.example.com', 'androids', 'Robot');
    clash.spec.names.singular = 'android';
    expect((await call(base(), 'POST', CRDS, clash)).status).toBe(201);
    const got = await until(
      'NamesAccepted False',
      () => call(base(), 'GET', `${CRDS}/androids.toys.example.com`),
      (g) => (g.body.status.conditions ?? []).length > 0,
    );
    expect(got.body.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['NamesAccepted', 'False', 'KindConflict', '"Robot" is already in use'],
      ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
    ]);
    expect((await call(base(), 'GET', '/apis/toys.example.com/v1/androids')).status).toBe(404);
    expect((await call(base(), 'DELETE', `${CRDS}/androids.toys.example.com`)).status).toBe(202);
    // A built-in kind's names are taken too.
    const eventz = crdOf('events.orch.io', 'eventz', 'Event');
    eventz.spec.names.singular = 'eventz';
    eventz.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, a test of names' };
    await call(base(), 'POST', CRDS, eventz);
    const builtIn = await until(
      'refused',
      () => call(base(), 'GET', `${CRDS}/eventz.events.orch.io`),
      (g) => (g.body.status.conditions ?? []).length > 0,
    );
    expect(builtIn.body.status.conditions[0]).toMatchObject({ status: 'False', reason: 'KindConflict', message: '"Event" is already in use' });
  });

  it('a bad CRD is one 422 with every error, and nothing of it is stored or served', async () => {
    const bad = crdOf('bad.example.com', 'things', 'Thing');
    bad.spec.scope = 'Everywhere';
    bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.type = 'int';
    // (A rule is compiled only where the schema around it is sound, as kube-apiserver does: this one's is.)
    bad.spec.versions[0].schema.openAPIV3Schema.properties.status['x-kubernetes-validations'] = [{ rule: 'self.phase ==' }];
    const r = await call(base(), 'POST', CRDS, bad);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes.map((c: any) => c.field)).toEqual([
      'spec.scope',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].type',
      'spec.versions[0].schema.openAPIV3Schema.properties[status].x-kubernetes-validations[0].rule',
    ]);
    expect(r.body.message).toMatch(/^CustomResourceDefinition.apiextensions.orch.io "things\.bad\.example\.com" is invalid: \[spec\.scope: Unsupported value: "Everywhere"/);
    expect((await call(base(), 'GET', `${CRDS}/things.bad.example.com`)).status).toBe(404);
    expect((await call(base(), 'GET', '/apis/bad.example.com')).status).toBe(404);
  });
});

describe('custom resources get what every kind gets', () => {
  it('watches with bookmarks; Exact reads of an older version', async () => {
    const list = await call(base(), 'GET', ROBOTS);
    const from = list.body.metadata.resourceVersion;
    const res = await fetch(`${base()}${ROBOTS}?watch=1&allowWatchBookmarks=true&resourceVersion=${from}`);
    const reader = res.body!.getReader();
    const first = await call(base(), 'POST', ROBOTS, robot('w1'));
    await call(base(), 'PATCH', `${ROBOTS}/w1`, { spec: { colour: 'blue' } }, { 'Content-Type': 'application/merge-patch+json' });
    await call(base(), 'DELETE', `${ROBOTS}/w1`);
    let text = '';
    for (const deadline = Date.now() + 5000; !(text.includes('DELETED') && text.includes('BOOKMARK')) && Date.now() < deadline;) text += Buffer.from((await reader.read()).value ?? []).toString();
    await reader.cancel();
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object.spec?.colour])).toEqual([
      ['ADDED', 'red'],
      ['MODIFIED', 'blue'],
      ['DELETED', 'blue'],
    ]);
    expect(events.find((e) => e.type === 'BOOKMARK').object).toMatchObject({ apiVersion: 'toys.example.com/v1', kind: 'Robot' });
    const exact = await call(base(), 'GET', `${ROBOTS}/w1?resourceVersion=${first.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(exact.body.spec.colour).toBe('red');
  });

  it('status and scale subresources: each writes its own part; generation follows the spec', async () => {
    const r = (await call(base(), 'POST', ROBOTS, robot('s1', { colour: 'red', replicas: 2 }))).body;
    const main = await call(base(), 'PUT', `${ROBOTS}/s1`, { ...r, spec: { colour: 'red', replicas: 2 }, status: { phase: 'ignored' } });
    expect(main.body.status).toBeUndefined();
    expect(main.body.metadata.generation).toBe(1);
    const status = await call(base(), 'PUT', `${ROBOTS}/s1/status`, { ...main.body, spec: { colour: 'ignored' }, status: { phase: 'Running', replicas: 2 } });
    expect(status.body).toMatchObject({ spec: { colour: 'red' }, status: { phase: 'Running', replicas: 2 }, metadata: { generation: 1 } });
    const scale = await call(base(), 'GET', `${ROBOTS}/s1/scale`);
    expect(scale.body).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 's1', namespace: 'default' }, spec: { replicas: 2 }, status: { replicas: 2 } });
    const scaled = await call(base(), 'PUT', `${ROBOTS}/s1/scale`, { ...scale.body, spec: { replicas: 4 } });
    expect(scaled.body.spec.replicas).toBe(4);
    const after = await call(base(), 'GET', `${ROBOTS}/s1`);
    expect(after.body).toMatchObject({ spec: { replicas: 4 }, metadata: { generation: 2 } });
    // A Scale from before is stale: 409.
    expect((await call(base(), 'PUT', `${ROBOTS}/s1/scale`, { ...scale.body, spec: { replicas: 1 } })).status).toBe(409);
    expect((await call(base(), 'GET', '/apis/toys.example.com/v1beta1/namespaces/default/robots/s1/scale')).status).toBe(404);
  });

  it('refuses a strategic merge patch (415, as kube-apiserver: a schema has no patch strategies), and OpenAPI does not offer it', async () => {
    const before = (await call(base(), 'POST', ROBOTS, robot('p1', { colour: 'red', replicas: 2 }))).body;
    const accepted = 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
    for (const path of [`${ROBOTS}/p1`, `${ROBOTS}/p1/status`, `${ROBOTS}/p1/scale`]) {
      const r = await call(base(), 'PATCH', path, { spec: { colour: 'blue' } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
      expect(r.status).toBe(415);
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'UnsupportedMediaType', code: 415 });
      expect(r.body.message).toBe(`the body of the request was in an unknown format - accepted media types include: ${accepted}`);
    }
    expect((await call(base(), 'GET', `${ROBOTS}/p1`)).body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // kubectl's client-side apply reads the PATCH operation's media types: strategic merge only for built-in kinds.
    const index = await call(base(), 'GET', '/openapi/v3');
    const v3 = await call(base(), 'GET', index.body.paths['apis/toys.example.com/v1'].serverRelativeURL);
    const v3Patch = (path: string) => Object.keys(v3.body.paths[path].patch.requestBody.content).sort();
    const crTypes = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json'];
    expect(v3Patch('/apis/toys.example.com/v1/namespaces/{namespace}/robots/{name}')).toEqual(crTypes);
    expect(v3Patch('/apis/toys.example.com/v1/namespaces/{namespace}/robots/{name}/status')).toEqual(crTypes);
    const v2 = await call(base(), 'GET', '/openapi/v2');
    expect([...v2.body.paths['/apis/toys.example.com/v1/namespaces/{namespace}/robots/{name}'].patch.consumes].sort()).toEqual(crTypes);
    expect(v2.body.paths['/apis/events.orch.io/v1/namespaces/{namespace}/events/{name}'].patch.consumes).toContain('application/strategic-merge-patch+json');
    // A built-in kind still takes it.
    const event = {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name: 'smp' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'a/b',
      reportingInstance: 'i',
      action: 'A',
      reason: 'R',
      type: 'Normal',
    };
    expect((await call(base(), 'POST', '/apis/events.orch.io/v1/namespaces/default/events', event)).status).toBe(201);
    const smp = await call(
      base(),
      'PATCH',
      '/apis/events.orch.io/v1/namespaces/default/events/smp',
      { metadata: { labels: { a: 'b' } } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    expect(smp.status).toBe(200);
  });

  it('Tables with its printer columns; field selectors on its selectable fields', async () => {
    await call(base(), 'POST', ROBOTS, robot('green-one', { colour: 'green' }));
    const table = await call(base(), 'GET', `${ROBOTS}?fieldSelector=spec.colour%3Dgreen`, undefined, { accept: TABLE });
    expect(table.body.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Colour']);
    expect(table.body.rows.map((r: any) => r.cells)).toEqual([['green-one', 'green']]);
    const bad = await call(base(), 'GET', `${ROBOTS}?fieldSelector=spec.size%3D1`);
    expect(bad.status).toBe(400);
  });

  it('fieldValidation: Strict refuses unknown fields (400), Warn names them, both prune them', async () => {
    const strict = await call(base(), 'POST', `${ROBOTS}?fieldValidation=Strict`, robot('f1', { colour: 'red', wheels: 3 }));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: unknown field "spec.wheels"');
    const warn = await call(base(), 'POST', `${ROBOTS}?fieldValidation=Warn`, robot('f1', { colour: 'red', wheels: 3 }));
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"spec.wheels\\""');
    expect(warn.body.spec).toEqual({ colour: 'red', replicas: 1 });
  });
});

describe('a deleted CRD', () => {
  it('refuses creates while its objects go (405), deletes them, then goes, its kind with it', async () => {
    const held = robot('held');
    (held.metadata as any).finalizers = ['example.com/hold'];
    expect((await call(base(), 'POST', ROBOTS, held)).status).toBe(201);
    expect((await call(base(), 'DELETE', `${CRDS}/robots.toys.example.com`)).status).toBe(202);
    // Held by the object's own finalizer: Terminating, creates refused, the other objects gone.
    const terminating = await until(
      'Terminating',
      () => call(base(), 'GET', `${CRDS}/robots.toys.example.com`),
      (g) => g.body.status?.conditions?.some((c: any) => c.type === 'Terminating'),
    );
    expect(terminating.body.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.orch.io']);
    const refused = await call(base(), 'POST', ROBOTS, robot('late'));
    expect(refused.status).toBe(405);
    expect(refused.body.message).toBe('create not allowed while custom resource definition is terminating');
    await until(
      'others deleted',
      () => call(base(), 'GET', ROBOTS),
      (l) => l.body.items.length === 1,
    );
    // Let the last one go: then the CRD goes, and its kind is no longer served.
    const last = (await call(base(), 'GET', `${ROBOTS}/held`)).body;
    await call(base(), 'PUT', `${ROBOTS}/held`, { ...last, metadata: { ...last.metadata, finalizers: [] } });
    await until(
      'CRD gone',
      () => call(base(), 'GET', `${CRDS}/robots.toys.example.com`),
      (g) => g.status === 404,
    );
    expect((await call(base(), 'GET', ROBOTS)).status).toBe(404);
    expect((await call(base(), 'GET', '/apis/toys.example.com')).status).toBe(404);
    const aggregated = await call(base(), 'GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    expect(aggregated.body.items.map((g: any) => g.metadata.name)).not.toContain('toys.example.com');
    expect((await call(base(), 'GET', '/openapi/v3')).body.paths['apis/toys.example.com/v1']).toBeUndefined();
  });
});

describe('a restart', () => {
  it('serves the kinds of the CRDs in the log from the start, their objects with them', async () => {
    const crd2 = crdOf('zoo.example.com', 'pandas', 'Panda');
    await call(base(), 'POST', CRDS, crd2);
    await call(base(), 'POST', '/apis/zoo.example.com/v1/namespaces/default/pandas', { apiVersion: 'zoo.example.com/v1', kind: 'Panda', metadata: { name: 'p1' }, spec: { colour: 'white' } });
    await server.close();
    server = await startServer({ dataDir, bookmarkIntervalMs: 200 });
    const got = await call(base(), 'GET', '/apis/zoo.example.com/v1/namespaces/default/pandas/p1');
    expect(got.status).toBe(200);
    expect(got.body.spec).toEqual({ colour: 'white', replicas: 1 });
  });
});
