/**
 * PATCH end to end against a real orchd (LevelDB in a temp folder, HTTP on 127.0.0.1): each patch
 * type, errors that leave the object untouched, optimistic locking only on request, dry run,
 * fieldValidation, /status, generation, and managedFields as every write records them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';

const G = '/apis/admissionregistration.orch.io/v1';
const VAP = `${G}/validatingadmissionpolicies`;
const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const STRATEGIC = { 'Content-Type': 'application/strategic-merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

let srv: TestServer;
let base: string;
let n = 0;

beforeAll(async () => {
  srv = await startServer();
  base = srv.url;
});
afterAll(async () => {
  await srv?.stop();
});

/** A fresh policy with its own name; returns the stored object. */
async function createPolicy(mutate: (o: any) => void = () => {}, query = ''): Promise<any> {
  const o = fixtures.validatingAdmissionPolicy();
  o.metadata.name = `p${++n}.example.com`;
  mutate(o);
  const res = await call(base, 'POST', `${VAP}${query}`, o);
  expect(res.status, res.text).toBe(201);
  return res.body;
}
const get = async (name: string) => (await call(base, 'GET', `${VAP}/${name}`)).body;
const patch = (name: string, body: unknown, headers: Record<string, string>, query = '') => call(base, 'PATCH', `${VAP}/${name}${query}`, body, headers);
const managers = (o: any): string[] => (o.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}`).sort();
const entry = (o: any, manager: string, operation = 'Update') => o.metadata.managedFields.find((e: any) => e.manager === manager && e.operation === operation);

describe('JSON patch', () => {
  it('applies operations in order', async () => {
    const p = await createPolicy();
    const res = await patch(
      p.metadata.name,
      [
        { op: 'test', path: '/spec/failurePolicy', value: 'Fail' },
        { op: 'replace', path: '/spec/failurePolicy', value: 'Ignore' },
        { op: 'add', path: '/spec/matchConditions/-', value: { name: 'second', expression: 'true' } },
        { op: 'add', path: '/metadata/annotations', value: { 'example.com/a': 'c' } },
        { op: 'copy', from: '/metadata/annotations/example.com~1a', path: '/metadata/annotations/copied' },
      ],
      JSON_PATCH,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.spec.failurePolicy).toBe('Ignore');
    expect(res.body.spec.matchConditions.map((c: any) => c.name)).toEqual(['not-system', 'second']);
    expect(res.body.metadata.annotations).toEqual({ 'example.com/a': 'c', copied: 'c' });
    expect(Number(res.body.metadata.resourceVersion)).toBeGreaterThan(Number(p.metadata.resourceVersion));
  });

  it.each([
    [
      'a failing test',
      [
        { op: 'replace', path: '/spec/failurePolicy', value: 'Ignore' },
        { op: 'test', path: '/spec/failurePolicy', value: 'Fail' },
      ],
      422,
      'Invalid',
    ],
    ['a path that does not exist', [{ op: 'remove', path: '/spec/nothing' }], 422, 'Invalid'],
    ['an index out of range', [{ op: 'add', path: '/spec/matchConditions/7', value: { name: 'x', expression: 'true' } }], 422, 'Invalid'],
    ['a body that is not a list', { op: 'add' }, 400, 'BadRequest'],
  ])('%s → %i %s and nothing written', async (_name, body, code, reason) => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, body, JSON_PATCH);
    expect(res.status, res.text).toBe(code);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason, code });
    expect((await get(p.metadata.name)).metadata.resourceVersion).toBe(p.metadata.resourceVersion);
  });

  it('a patched object that fails validation is 422 Invalid with the field path', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, [{ op: 'replace', path: '/spec/failurePolicy', value: 'Sometimes' }], JSON_PATCH);
    expect(res.status).toBe(422);
    expect(res.body.details.causes[0].field).toBe('spec.failurePolicy');
  });

  it('renaming through a patch is refused', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, [{ op: 'replace', path: '/metadata/name', value: 'other' }], JSON_PATCH);
    expect(res.status).toBe(400);
  });
});

describe('merge patch', () => {
  it('null deletes, maps merge, lists are replaced whole', async () => {
    const p = await createPolicy((o) => (o.metadata.labels = { keep: '1', drop: '2' }));
    const res = await patch(p.metadata.name, { metadata: { labels: { drop: null, add: '3' } }, spec: { matchConditions: [{ name: 'only', expression: 'true' }], paramKind: null } }, MERGE);
    expect(res.status, res.text).toBe(200);
    expect(res.body.metadata.labels).toEqual({ keep: '1', add: '3' });
    expect(res.body.spec.matchConditions).toEqual([{ name: 'only', expression: 'true' }]);
    expect(res.body.spec.paramKind).toBeUndefined();
    expect(res.body.spec.variables).toHaveLength(2);
  });

  it('a patch of an absent object is 404', async () => {
    const res = await patch('absent.example.com', { metadata: { labels: { a: 'b' } } }, MERGE);
    expect(res.status).toBe(404);
    expect(res.body.reason).toBe('NotFound');
  });
});

describe('strategic merge patch', () => {
  it('merges matchConditions by name and honours $patch: delete', async () => {
    const p = await createPolicy((o) => o.spec.matchConditions.push({ name: 'two', expression: 'true' }));
    const res = await patch(
      p.metadata.name,
      {
        spec: {
          matchConditions: [
            { name: 'two', expression: 'false' },
            { name: 'not-system', $patch: 'delete' },
            { name: 'three', expression: 'true' },
          ],
        },
      },
      STRATEGIC,
    );
    expect(res.status, res.text).toBe(200);
    const byName = Object.fromEntries(res.body.spec.matchConditions.map((c: any) => [c.name, c.expression]));
    expect(byName).toEqual({ two: 'false', three: 'true' });
  });

  it('replaces atomic lists (validations)', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, { spec: { validations: [{ expression: 'true' }] } }, STRATEGIC);
    expect(res.body.spec.validations).toEqual([{ expression: 'true' }]);
  });
});

describe('patch options and concurrency', () => {
  it('an unsupported Content-Type is 415 listing the patch types', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, {}, { 'Content-Type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.body.message).toContain('application/strategic-merge-patch+json');
  });

  it('force on a non-apply patch is refused; an apply patch needs a fieldManager', async () => {
    const p = await createPolicy();
    const forced = await patch(p.metadata.name, {}, MERGE, '?force=true');
    expect(forced.status).toBe(422);
    expect(forced.body.details.causes[0]).toMatchObject({ field: 'force' });
    const noManager = await patch(p.metadata.name, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy' }, APPLY);
    expect(noManager.status).toBe(422);
    expect(noManager.body.details.causes[0]).toMatchObject({ field: 'fieldManager' });
  });

  it('never takes the lock unless the patch carries a resourceVersion (then a mismatch is 409)', async () => {
    const p = await createPolicy();
    await patch(p.metadata.name, { metadata: { labels: { a: '1' } } }, MERGE);
    // Based on a stale read, without resourceVersion: last write wins.
    const blind = await patch(p.metadata.name, { metadata: { labels: { b: '2' } } }, MERGE);
    expect(blind.status).toBe(200);
    const stale = await patch(p.metadata.name, { metadata: { resourceVersion: p.metadata.resourceVersion, labels: { c: '3' } } }, MERGE);
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const fresh = await patch(p.metadata.name, { metadata: { resourceVersion: blind.body.metadata.resourceVersion, labels: { c: '3' } } }, MERGE);
    expect(fresh.status).toBe(200);
  });

  it('concurrent patches all land (re-applied to the latest object on a race)', async () => {
    const p = await createPolicy();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => patch(p.metadata.name, { metadata: { labels: { [`k${i}`]: 'v' } } }, MERGE)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(Object.keys((await get(p.metadata.name)).metadata.labels).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
  });

  it('dryRun returns the patched object and writes nothing', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, { spec: { failurePolicy: 'Ignore' } }, MERGE, '?dryRun=All');
    expect(res.status).toBe(200);
    expect(res.body.spec.failurePolicy).toBe('Ignore');
    const after = await get(p.metadata.name);
    expect(after.spec.failurePolicy).toBe('Fail');
    expect(after.metadata.resourceVersion).toBe(p.metadata.resourceVersion);
  });

  it('dryRun apply of an absent object creates nothing', async () => {
    const cfg = { ...fixtures.validatingAdmissionPolicy(), metadata: { name: 'dry.example.com' } };
    const res = await patch('dry.example.com', cfg, APPLY, '?fieldManager=m&dryRun=All');
    expect(res.status, res.text).toBe(201);
    expect((await call(base, 'GET', `${VAP}/dry.example.com`)).status).toBe(404);
  });

  it('fieldValidation: Strict refuses unknown fields of the patch, Warn drops them with a Warning', async () => {
    const p = await createPolicy();
    const strict = await patch(p.metadata.name, { spec: { bogus: 1, failurePolicy: 'Ignore' } }, MERGE, '?fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "spec.bogus"');
    expect((await get(p.metadata.name)).spec.failurePolicy).toBe('Fail');
    const warn = await patch(p.metadata.name, { spec: { bogus: 1, failurePolicy: 'Ignore' } }, MERGE, '?fieldValidation=Warn');
    expect(warn.status).toBe(200);
    expect(warn.headers.get('warning')).toContain('unknown field \\"spec.bogus\\"');
    expect(warn.body.spec.bogus).toBeUndefined();
    expect(warn.body.spec.failurePolicy).toBe('Ignore');
  });

  it('generation moves with spec changes only', async () => {
    const p = await createPolicy();
    const meta = await patch(p.metadata.name, { metadata: { labels: { x: 'y' } } }, MERGE);
    expect(meta.body.metadata.generation).toBe(p.metadata.generation);
    const spec = await patch(p.metadata.name, { spec: { failurePolicy: 'Ignore' } }, MERGE);
    expect(spec.body.metadata.generation).toBe(p.metadata.generation + 1);
  });
});

describe('status subresource', () => {
  it('a patch of /status changes only status and not generation', async () => {
    const p = await createPolicy();
    const res = await call(base, 'PATCH', `${VAP}/${p.metadata.name}/status?fieldManager=controller`, { spec: { failurePolicy: 'Ignore' }, status: { observedGeneration: 1 } }, MERGE);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toEqual({ observedGeneration: 1 });
    expect(res.body.spec.failurePolicy).toBe('Fail');
    expect(res.body.metadata.generation).toBe(p.metadata.generation);
    expect(entry(res.body, 'controller')).toMatchObject({ subresource: 'status', fieldsV1: { 'f:status': { 'f:observedGeneration': {} } } });
  });

  it('a patch of the main resource ignores status', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, { status: { observedGeneration: 9 } }, MERGE);
    expect(res.status).toBe(200);
    expect(res.body.status).toBeUndefined();
  });
});

describe('managedFields of Update operations', () => {
  it('create, replace and patch each record their manager with the fields they set', async () => {
    const p = await createPolicy(() => {}, '?fieldManager=creator');
    expect(managers(p)).toEqual(['creator/Update']);
    expect(entry(p, 'creator')).toMatchObject({ apiVersion: 'admissionregistration.orch.io/v1', fieldsType: 'FieldsV1' });
    expect(entry(p, 'creator').fieldsV1['f:spec']['f:matchConditions']).toEqual({ 'k:{"name":"not-system"}': { '.': {}, 'f:expression': {}, 'f:name': {} } });
    expect(typeof entry(p, 'creator').time).toBe('string');

    const replaced = structuredClone(p);
    replaced.spec.failurePolicy = 'Ignore';
    const put = await call(base, 'PUT', `${VAP}/${p.metadata.name}?fieldManager=replacer`, replaced);
    expect(put.status, put.text).toBe(200);
    expect(entry(put.body, 'replacer').fieldsV1).toEqual({ 'f:spec': { 'f:failurePolicy': {} } });
    expect(entry(put.body, 'creator').fieldsV1['f:spec']['f:failurePolicy']).toBeUndefined();

    const patched = await patch(p.metadata.name, { metadata: { labels: { a: 'b' } } }, MERGE, '');
    expect(patched.status).toBe(200);
    expect(managers(patched.body)).toEqual(['creator/Update', 'node/Update', 'replacer/Update']);
    expect(entry(patched.body, 'node').fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
  });

  it('a PUT that changes nothing writes nothing; managedFields [{}] resets tracking', async () => {
    const p = await createPolicy(() => {}, '?fieldManager=creator');
    const same = await call(base, 'PUT', `${VAP}/${p.metadata.name}?fieldManager=creator`, p);
    expect(same.status).toBe(200);
    expect(same.body.metadata.resourceVersion).toBe(p.metadata.resourceVersion);
    expect(same.body.metadata.managedFields).toEqual(p.metadata.managedFields);
    const reset = await patch(p.metadata.name, [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }], JSON_PATCH);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.metadata.managedFields).toBeUndefined();
  });

  it('the default manager is the User-Agent up to its first slash', async () => {
    const p = await createPolicy();
    const res = await patch(p.metadata.name, { metadata: { labels: { ua: 'x' } } }, { ...MERGE, 'User-Agent': 'my-tool/1.2 (linux)' });
    expect(managers(res.body)).toContain('my-tool/Update');
  });
});

describe('server-side apply', () => {
  const config = (name: string, spec: Record<string, unknown> = {}) => {
    const o = fixtures.validatingAdmissionPolicy();
    o.metadata = { name };
    Object.assign(o.spec, spec);
    return o;
  };

  const minimal = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec });

  it('creates (201), then updates (200), recording an Apply entry', async () => {
    const name = 'apply1.example.com';
    const created = await patch(name, config(name), APPLY, '?fieldManager=alice');
    expect(created.status, created.text).toBe(201);
    expect(managers(created.body)).toEqual(['alice/Apply']);
    expect(entry(created.body, 'alice', 'Apply').fieldsV1['f:spec']['f:failurePolicy']).toBeUndefined();
    const again = await patch(name, config(name, { failurePolicy: 'Ignore' }), APPLY, '?fieldManager=alice');
    expect(again.status).toBe(200);
    expect(again.body.spec.failurePolicy).toBe('Ignore');
  });

  it('YAML bodies are read as YAML', async () => {
    const name = 'apply-yaml.example.com';
    const yaml = `apiVersion: admissionregistration.orch.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: ${name}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}\n  validations:\n  - expression: "true"\n`;
    const res = await patch(name, yaml, APPLY, '?fieldManager=yaml');
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec.validations).toEqual([{ expression: 'true' }]);
  });

  it('a conflicting value is 409 naming manager and field; force takes ownership', async () => {
    const name = 'apply2.example.com';
    await patch(name, config(name, { failurePolicy: 'Fail' }), APPLY, '?fieldManager=alice');
    // bob applies only the field it cares about (a full copy would also fight over defaulted atomic fields).
    const conflict = await patch(name, minimal(name, { failurePolicy: 'Ignore' }), APPLY, '?fieldManager=bob');
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(conflict.body.message).toContain('conflict with "alice"');
    expect(conflict.body.details.causes).toContainEqual({ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.failurePolicy' });
    expect((await get(name)).spec.failurePolicy).toBe('Fail');

    const forced = await patch(name, minimal(name, { failurePolicy: 'Ignore' }), APPLY, '?fieldManager=bob&force=true');
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.spec.failurePolicy).toBe('Ignore');
    expect(entry(forced.body, 'alice', 'Apply').fieldsV1['f:spec']['f:failurePolicy']).toBeUndefined();
    expect(entry(forced.body, 'bob', 'Apply').fieldsV1['f:spec']['f:failurePolicy']).toEqual({});
  });

  it('conflicts with an Update manager name its apiVersion', async () => {
    const p = await createPolicy(() => {}, '?fieldManager=kubectl-client-side-apply');
    const res = await patch(p.metadata.name, minimal(p.metadata.name, { failurePolicy: 'Ignore' }), APPLY, '?fieldManager=kubectl');
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using admissionregistration.orch.io/v1: .spec.failurePolicy');
  });

  it('removes fields the manager no longer applies, unless another manager owns them', async () => {
    const name = 'apply3.example.com';
    const two = config(name);
    two.spec.matchConditions = [
      { name: 'a', expression: 'true' },
      { name: 'b', expression: 'true' },
      { name: 'c', expression: 'true' },
    ];
    two.metadata.labels = { team: 'x' };
    await patch(name, two, APPLY, '?fieldManager=alice');
    const bob = await patch(name, { apiVersion: two.apiVersion, kind: two.kind, metadata: { name }, spec: { matchConditions: [{ name: 'c', expression: 'true' }] } }, APPLY, '?fieldManager=bob');
    expect(bob.status, bob.text).toBe(200);
    expect(managers(bob.body)).toEqual(['alice/Apply', 'bob/Apply']);
    const one = config(name);
    one.spec.matchConditions = [{ name: 'a', expression: 'true' }];
    const res = await patch(name, one, APPLY, '?fieldManager=alice');
    expect(res.status, res.text).toBe(200);
    expect(res.body.spec.matchConditions.map((c: any) => c.name).sort()).toEqual(['a', 'c']);
    expect(res.body.metadata.labels).toBeUndefined();
  });

  it('unknown fields in a configuration: Strict → 400 naming them', async () => {
    const name = 'apply4.example.com';
    const cfg = config(name);
    cfg.spec.bogus = true;
    const res = await patch(name, cfg, APPLY, '?fieldManager=a&fieldValidation=Strict');
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('unknown field "spec.bogus"');
  });

  it('apply to /status of an absent object is 404', async () => {
    const res = await call(base, 'PATCH', `${VAP}/nothing.example.com/status?fieldManager=a`, config('nothing.example.com'), APPLY);
    expect(res.status).toBe(404);
  });
});
