/**
 * Kubernetes' ClusterRole aggregation controller: a ClusterRole with an aggregationRule gets, as its
 * rules, the rules of every other ClusterRole one of its selectors matches (in name order, each rule
 * once). Any committed change to a ClusterRole may change what some aggregated role gathers, so every
 * aggregated role is recomputed after each change; a role whose rules already agree is not written.
 * The writes are ordinary updates in the log, so watchers and the RBAC authorizer see them.
 */
import { RBAC_GROUP } from '../api/groups.js';
import { cloneJson, isSet, jsonEqual, listAt, objectAt } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import { isRegistryError } from '../registry/errors.js';
import { labelSelectorTest } from '../registry/selection.js';
import { map, startWith } from 'rxjs';
import { coalesce, runSerially } from './work-queue.js';

/** The rules an aggregated role should have, given every ClusterRole (in name order, as the store lists them). */
export function aggregatedRules(role: KubeObject, all: readonly KubeObject[]): unknown[] {
  const selectors = listAt(objectAt(role, 'aggregationRule'), 'clusterRoleSelectors').map(labelSelectorTest);
  const rules: unknown[] = [];
  for (const other of all) {
    if (other.metadata.name === role.metadata.name) continue;
    if (!selectors.some((selects) => selects(other.metadata.labels))) continue;
    for (const rule of listAt(other, 'rules')) if (!rules.some((r) => jsonEqual(r, rule))) rules.push(cloneJson(rule));
  }
  return rules;
}

export function startClusterRoleAggregation(objects: Registry, kinds: readonly KindStrategy[], log: Logger): () => void {
  const clusterRole = kinds.find((k) => k.group === RBAC_GROUP && k.plural === 'clusterroles');
  if (!clusterRole) return () => {};
  const reconcileAll = async () => {
    const all = [...objects.list(clusterRole, undefined)].map((s) => s.obj);
    for (const role of all) {
      if (!isSet(role, 'aggregationRule')) continue;
      const rules = aggregatedRules(role, all);
      if (jsonEqual(rules, listAt(role, 'rules'))) continue;
      // On the latest object (a write race re-runs the transform); a missing one answers 404.
      await objects
        .update(clusterRole, undefined, role.metadata.name ?? '', (cur) => ({ ...(cur ?? role), rules }), { dryRun: false })
        .catch((err: unknown) => {
          // Deleted meanwhile: nothing left to aggregate into.
          if (!isRegistryError(err, 'NotFound')) throw err;
        });
    }
  };

  // Any number of changes that come together are one pass: it reads every role as it is then.
  const changed = objects.changes(clusterRole).pipe(
    map(() => 'all roles'),
    startWith('all roles'),
    coalesce(),
  );
  const sub = runSerially('clusterrole aggregation', log, changed, reconcileAll);
  return () => sub.unsubscribe();
}
