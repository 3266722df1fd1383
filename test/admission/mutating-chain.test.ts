/**
 * The MutatingAdmissionPolicy plugin in the mutating chain, on a real server's store, called as the
 * object store calls it: a later plugin (standing in for a webhook) that changes the object makes
 * IfNeeded policies run again and Never policies not; a policy compiles once per generation;
 * variables reach mutations.
 */
import { describe, expect, test } from 'vitest';
import { MutatingPolicyPlugin } from '../../src/admission/index.js';
import { admissionAttributes } from '../../src/admission/attributes.js';
import { runMutatingPlugins, type MutatingPlugin } from '../../src/admission/mutation.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KubeObject } from '../../src/api/types.js';
import { call, serverForFile } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';

const ADM = '/apis/admissionregistration.orch.io/v1';
const eventKind = kinds.find((k) => k.kind === 'Event')!;
const file = serverForFile();
const rule = { apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE'] };

async function install(name: string, spec: Record<string, unknown>): Promise<void> {
  const p = await call(file.base, 'POST', `${ADM}/mutatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [rule] }, reinvocationPolicy: 'Never', ...spec },
  });
  expect(p.status, p.text).toBe(201);
  const b = await call(file.base, 'POST', `${ADM}/mutatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: `${name}-b` },
    spec: { policyName: name },
  });
  expect(b.status, b.text).toBe(201);
}
async function remove(name: string): Promise<void> {
  await call(file.base, 'DELETE', `${ADM}/mutatingadmissionpolicybindings/${name}-b`);
  await call(file.base, 'DELETE', `${ADM}/mutatingadmissionpolicies/${name}`);
}

/** A later plugin that sets a label once per request, as a webhook patch would. */
function labeller(value: string | undefined): MutatingPlugin {
  return {
    begin: () => ({
      run: async (_attrs, object) => {
        if (value === undefined || object.metadata.labels?.later === value) return object;
        return { ...object, metadata: { ...object.metadata, labels: { ...object.metadata.labels, later: value } } };
      },
    }),
  };
}

/** The chain's result for a CREATE of an Event: the policies first, then the later plugin. */
function mutate(plugin: MutatingPolicyPlugin, later: MutatingPlugin): Promise<KubeObject> {
  const e = fixtures.event();
  e.metadata = { name: 'e', namespace: 'default' };
  const store = file.server.store;
  const attrs = admissionAttributes(store, undefined, 'CREATE', eventKind, e, undefined, { username: 'alice', uid: '', groups: [], extra: {} }, { dryRun: false });
  return runMutatingPlugins([plugin, later], 'CREATE', eventKind, () => attrs, e);
}

const counter = {
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{annotations: {"runs": string(int(object.metadata.?annotations.?runs.orValue("0")) + 1)}}}' },
    },
  ],
};

describe('reinvocation by a later plugin', () => {
  test.each([
    ['IfNeeded, the later plugin changed the object → runs again', 'IfNeeded', 'x', '2'],
    ['Never → runs once', 'Never', 'x', '1'],
    ['IfNeeded, the later plugin changed nothing → runs once', 'IfNeeded', undefined, '1'],
  ])('%s', async (_, reinvocationPolicy, later, runs) => {
    const plugin = new MutatingPolicyPlugin(file.server.store, kinds);
    await install('counter', { ...counter, reinvocationPolicy });
    try {
      const out = await mutate(plugin, labeller(later));
      expect(out.metadata.annotations).toEqual({ runs });
      expect(out.metadata.labels?.later).toBe(later);
    } finally {
      await remove('counter');
    }
  });
});

describe('compilation and variables', () => {
  test('a policy compiles once per generation; variables reach the mutations', async () => {
    const plugin = new MutatingPolicyPlugin(file.server.store, kinds);
    await install('with-vars', {
      variables: [{ name: 'who', expression: "request.userInfo.username + '-' + object.reason" }],
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"who": variables.who}}}' } }],
    });
    try {
      const before = plugin.registry.compiles;
      expect((await mutate(plugin, labeller(undefined))).metadata.labels).toEqual({ who: 'alice-Scheduled' });
      expect((await mutate(plugin, labeller(undefined))).metadata.labels).toEqual({ who: 'alice-Scheduled' });
      expect(plugin.registry.compiles - before).toBe(1);
      const cur = (await call(file.base, 'GET', `${ADM}/mutatingadmissionpolicies/with-vars`)).body;
      cur.spec.variables[0].expression = "'v2-' + object.reason";
      expect((await call(file.base, 'PUT', `${ADM}/mutatingadmissionpolicies/with-vars`, cur)).status).toBe(200);
      expect((await mutate(plugin, labeller(undefined))).metadata.labels).toEqual({ who: 'v2-Scheduled' });
      expect(plugin.registry.compiles - before).toBe(2);
    } finally {
      await remove('with-vars');
    }
  });
});
