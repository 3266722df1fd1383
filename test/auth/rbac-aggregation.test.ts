/**
 * ClusterRole aggregation: the controller beside the server writes an aggregated role's rules from
 * the ClusterRoles its selectors match, and follows their changes.
 */
import { describe, expect, it } from 'vitest';
import { aggregatedRules } from '../../src/controllers/cluster-role-aggregation.js';
import { StoreRbacSource } from '../../src/registry/rbac-source.js';
import { rbacAuthorizer } from '../../src/auth/rbac-authorizer.js';
import type { KubeObject } from '../../src/api/types.js';
import { call, serverForFile } from '../helpers/server.js';
import { sleep } from '../helpers/poll.js';

const G = 'rbac.authorization.orch.io';
const V1 = `/apis/${G}/v1`;
const LABEL = 'example.com/aggregate-to-monitoring';
const file = serverForFile();

const clusterRole = (name: string, labels: Record<string, string>, rules: object[], extra: object = {}): KubeObject =>
  ({ apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name, labels }, rules, ...extra }) as KubeObject;
const EVENTS = { apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get'] };
const NAMESPACES = { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] };
const HEALTH = { nonResourceURLs: ['/healthz'], verbs: ['get'] };

/** The rules of the role once they equal `want`, polling the server a bounded number of times. */
async function rulesBecome(name: string, want: unknown[]): Promise<unknown[]> {
  let rules: unknown[] = [];
  for (let i = 0; i < 100; i++) {
    rules = (await call(file.base, 'GET', `${V1}/clusterroles/${name}`)).body.rules ?? [];
    if (JSON.stringify(rules) === JSON.stringify(want)) break;
    await sleep(20);
  }
  return rules;
}

describe('aggregatedRules', () => {
  it('gathers the rules of the matching roles in name order, each rule once, never its own', () => {
    const agg = clusterRole('monitoring', {}, [HEALTH], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [LABEL]: 'true' } }, { matchExpressions: [{ key: 'tier', operator: 'In', values: ['ops'] }] }] },
    });
    const all = [
      clusterRole('a-events', { [LABEL]: 'true' }, [EVENTS]),
      clusterRole('b-ops', { tier: 'ops' }, [NAMESPACES, EVENTS]),
      clusterRole('c-other', { tier: 'dev' }, [HEALTH]),
      { ...agg, metadata: { ...agg.metadata, labels: { [LABEL]: 'true' } } },
    ];
    expect(aggregatedRules(agg, all)).toEqual([EVENTS, NAMESPACES]);
  });
});

describe('the aggregation controller', () => {
  it('writes, grows and shrinks an aggregated role with the roles it selects; RBAC grants by it', async () => {
    const create = async (o: KubeObject) => expect((await call(file.base, 'POST', `${V1}/clusterroles`, o)).status).toBe(201);
    await create(clusterRole('monitoring', {}, [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [LABEL]: 'true' } }] } }));
    await create(clusterRole('monitor-events', { [LABEL]: 'true' }, [EVENTS]));
    await create(clusterRole('unrelated', {}, [HEALTH]));
    expect(await rulesBecome('monitoring', [EVENTS])).toEqual([EVENTS]);

    await create(clusterRole('monitor-namespaces', { [LABEL]: 'true' }, [NAMESPACES]));
    expect(await rulesBecome('monitoring', [EVENTS, NAMESPACES])).toEqual([EVENTS, NAMESPACES]);

    const bound = await call(file.base, 'POST', `${V1}/clusterrolebindings`, {
      apiVersion: `${G}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'monitors' },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'monitoring' },
      subjects: [{ kind: 'Group', name: 'monitors' }],
    });
    expect(bound.status).toBe(201);
    const source = new StoreRbacSource(file.server.store);
    try {
      const authz = rbacAuthorizer(source);
      const listNamespaces = () => authz.authorize({ user: { username: 'm', groups: ['monitors'] }, verb: 'list', isResourceRequest: true, apiGroup: '', resource: 'namespaces' });
      expect(listNamespaces().decision).toBe('allow');

      const unlabel = await call(file.base, 'PATCH', `${V1}/clusterroles/monitor-namespaces`, { metadata: { labels: { [LABEL]: null } } }, { 'Content-Type': 'application/merge-patch+json' });
      expect(unlabel.status).toBe(200);
      expect(await rulesBecome('monitoring', [EVENTS])).toEqual([EVENTS]);
      expect(listNamespaces().decision).toBe('noOpinion');

      expect((await call(file.base, 'DELETE', `${V1}/clusterroles/monitor-events`)).status).toBe(200);
      expect(await rulesBecome('monitoring', [])).toEqual([]);
    } finally {
      source.close();
    }
  });
});
