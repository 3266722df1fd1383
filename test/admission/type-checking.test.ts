/**
 * The typeChecking status of ValidatingAdmissionPolicies: the type checker against the served kinds'
 * schemas (which kinds a policy's rules name, each expression's fieldRef, Kubernetes' wording), and
 * the controller on a real orchd (a typo is reported without any request failing, a fix clears it,
 * observedGeneration follows the generation, and nothing is written when the status is current).
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { typeCheckPolicy } from '../../src/admission/index.js';
import { silentLogger } from '../../src/observability/logger.js';
import { buildRegistry } from '../../src/registry/build.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { kinds } from '../../src/resources/kinds.js';
import { Store } from '../../src/store/store.js';
import { call, serverForFile, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

const VAP = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
const nsRule = { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE', 'UPDATE'] };

function policy(name: string, spec: Record<string, unknown>): any {
  return {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [nsRule] }, validations: [{ expression: 'true' }], ...spec },
  };
}

describe('type checker', () => {
  test('a misspelt field is a warning at its fieldRef, worded as Kubernetes words it', () => {
    const w = typeCheckPolicy(policy('p', { validations: [{ expression: 'object.spec.replicsa > 1' }] }), kinds);
    expect(w).toEqual([
      { fieldRef: 'spec.validations[0].expression', warning: "/v1, Kind=Namespace: ERROR: <input>:1:13: undefined field 'replicsa'\n | object.spec.replicsa > 1\n | ............^\n" },
    ]);
  });

  test('every expression of the policy is checked, each under its own fieldRef', () => {
    const w = typeCheckPolicy(
      policy('p', {
        variables: [
          { name: 'fin', expression: 'object.spec.finalizerz' },
          { name: 'ok', expression: 'object.metadata.name' },
        ],
        matchConditions: [{ name: 'm', expression: 'object.metadata.lables.size() > 0' }],
        validations: [{ expression: 'variables.ok != ""', messageExpression: "'bad ' + object.stauts.phase" }, { expression: 'object.status.phase == "Active"' }],
        auditAnnotations: [{ key: 'a', valueExpression: 'oldObject.spec.nope' }],
      }),
      kinds,
    );
    expect(w.map((x) => x.fieldRef)).toEqual([
      'spec.variables[0].expression',
      'spec.matchConditions[0].expression',
      'spec.validations[0].messageExpression',
      'spec.auditAnnotations[0].valueExpression',
    ]);
    expect(w.map((x) => /undefined field '(\w+)'/.exec(x.warning)?.[1])).toEqual(['finalizerz', 'lables', 'stauts', 'nope']);
  });

  test('a policy matching two kinds is checked against each; the warning names every kind that fails', () => {
    const rules = { resourceRules: [{ apiGroups: ['', 'events.orch.io'], apiVersions: ['v1'], resources: ['namespaces', 'events'], operations: ['*'] }] };
    const [onlyNs] = typeCheckPolicy(policy('p', { matchConstraints: rules, validations: [{ expression: 'object.spec.finalizers.size() > 0' }] }), kinds);
    // The core group's events are served too (core v1 Event): both Event kinds fail, the Namespace does not.
    expect(onlyNs.warning).toMatch(/^\/v1, Kind=Event: ERROR: <input>:1:8: undefined field 'spec'/);
    expect(onlyNs.warning).toMatch(/\n\nevents\.orch\.io\/v1, Kind=Event: ERROR: <input>:1:8: undefined field 'spec'/);
    expect(onlyNs.warning).not.toContain('Kind=Namespace');
    const [both] = typeCheckPolicy(policy('p', { matchConstraints: rules, validations: [{ expression: 'object.nosuch == 1' }] }), kinds);
    // Kubernetes' order: by group, then version, then kind; one result per kind, joined by a newline.
    expect(both.warning.split('\n\n').map((s) => s.slice(0, s.indexOf(':')))).toEqual(['/v1, Kind=Event', '/v1, Kind=Namespace', 'events.orch.io/v1, Kind=Event']);
  });

  test('rules with wildcards name no kind exactly: nothing to check against, no warnings', () => {
    const anyGroup = { resourceRules: [{ ...nsRule, apiGroups: ['*'] }] };
    const anyVersion = { resourceRules: [{ ...nsRule, apiVersions: ['*'] }] };
    const anyResource = { resourceRules: [{ ...nsRule, resources: ['*', 'namespaces/status'] }] };
    for (const matchConstraints of [anyGroup, anyVersion, anyResource]) {
      expect(typeCheckPolicy(policy('p', { matchConstraints, validations: [{ expression: 'object.nosuch' }] }), kinds)).toEqual([]);
    }
  });

  test('params are typed by a served paramKind; a policy without problems has no warnings', () => {
    const paramKind = { apiVersion: 'events.orch.io/v1', kind: 'Event' };
    const w = typeCheckPolicy(policy('p', { paramKind, validations: [{ expression: 'params.notte == object.metadata.name' }] }), kinds);
    expect(w).toHaveLength(1);
    expect(w[0].warning).toContain("undefined field 'notte'");
    expect(typeCheckPolicy(policy('p', { paramKind, validations: [{ expression: 'params.note == object.metadata.name' }] }), kinds)).toEqual([]);
    // An unserved paramKind leaves params dynamic, as Kubernetes does when it finds no schema.
    expect(typeCheckPolicy(policy('p', { paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' }, validations: [{ expression: 'params.anything' }] }), kinds)).toEqual([]);
  });
});

/** Polls the policy until pred holds (bounded: 5 s). */
async function untilAt(base: string, name: string, pred: (p: any) => boolean): Promise<any> {
  for (let i = 0; i < 250; i++) {
    const r = await call(base, 'GET', `${VAP}/${name}`);
    if (r.status === 200 && pred(r.body)) return r.body;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`policy ${name} never reached the expected status`);
}
const observed = (gen: number) => (p: any) => p.status?.observedGeneration === gen;

describe('the status controller', () => {
  const file = serverForFile({ policyStatus: true });

  const until = (name: string, pred: (p: any) => boolean) => untilAt(file.base, name, pred);
  const idle = () => new Promise((res) => setTimeout(res, 300));

  test('a typo is reported without any request failing; fixing it clears it; observedGeneration follows', async () => {
    const created = await call(file.base, 'POST', VAP, policy('typo', { validations: [{ expression: 'object.spec.replicsa > 1', message: 'too few' }] }));
    expect(created.status, created.text).toBe(201);
    const first = await until('typo', observed(1));
    expect(first.status.typeChecking.expressionWarnings).toEqual([{ fieldRef: 'spec.validations[0].expression', warning: expect.stringContaining("undefined field 'replicsa'") }]);

    // A metadata change keeps the generation: not checked again, not written again.
    const labelled = await call(file.base, 'PATCH', `${VAP}/typo`, { metadata: { labels: { team: 'a' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(labelled.status, labelled.text).toBe(200);
    expect(labelled.body.metadata.generation).toBe(1);
    await idle();
    expect((await call(file.base, 'GET', `${VAP}/typo`)).body.metadata.resourceVersion).toBe(labelled.body.metadata.resourceVersion);

    const fixed = await call(
      file.base,
      'PATCH',
      `${VAP}/typo`,
      { spec: { validations: [{ expression: 'size(object.spec.finalizers) > 1', message: 'too few' }] } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body.metadata.generation).toBe(2);
    const second = await until('typo', observed(2));
    // Checked, nothing found: typeChecking present and empty, as Kubernetes leaves it.
    expect(second.status.typeChecking).toEqual({});
    // The controller's own write does not trigger another: the object stays as it wrote it.
    await idle();
    expect((await call(file.base, 'GET', `${VAP}/typo`)).body.metadata.resourceVersion).toBe(second.metadata.resourceVersion);
  });

  test('conditions a client wrote are kept; a status already observed at the generation is left alone', async () => {
    expect((await call(file.base, 'POST', VAP, policy('kept', {}))).status).toBe(201);
    const checked = await until('kept', observed(1));
    const condition = { type: 'Reviewed', status: 'True', reason: 'ByHand', message: 'ok', lastTransitionTime: '2026-01-02T03:04:05Z' };
    const put = await call(file.base, 'PUT', `${VAP}/kept/status`, { ...checked, status: { ...checked.status, conditions: [condition] } });
    expect(put.status, put.text).toBe(200);
    await idle();
    expect((await call(file.base, 'GET', `${VAP}/kept`)).body.metadata.resourceVersion).toBe(put.body.metadata.resourceVersion);

    const changed = await call(file.base, 'PATCH', `${VAP}/kept`, { spec: { validations: [{ expression: 'object.nope' }] } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(changed.status, changed.text).toBe(200);
    const after = await until('kept', observed(2));
    expect(after.status.conditions).toEqual([condition]);
    expect(after.status.typeChecking.expressionWarnings.map((w: any) => w.fieldRef)).toEqual(['spec.validations[0].expression']);
  });

  test('a policy stored while no controller ran is checked when the server starts', async () => {
    const dataDir = tempDir('orchd-typecheck-');
    // The store alone, as a server in its log replay holds it: the write happens, no controller runs.
    const log = new LevelDbLog({ path: join(dataDir, 'log') });
    await log.open();
    const store = new Store({ log });
    await store.start();
    const objects = buildRegistry(store, kinds, { logger: silentLogger });
    const vapKind = kinds.find((k) => k.kind === 'ValidatingAdmissionPolicy')!;
    await objects.create(vapKind, undefined, policy('offline', { validations: [{ expression: 'object.spek' }] }), { dryRun: false });
    await store.close();
    await log.close();

    const srv = await startServer({ dataDir, policyStatus: true });
    try {
      const r = await untilAt(srv.url, 'offline', observed(1));
      expect(r.status.typeChecking.expressionWarnings[0]).toMatchObject({ fieldRef: 'spec.validations[0].expression', warning: expect.stringContaining("undefined field 'spek'") });
    } finally {
      await srv.stop();
    }
  });
});
