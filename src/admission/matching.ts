/**
 * Whether a request falls under a MatchResources (a policy's matchConstraints or a binding's
 * matchResources), as Kubernetes' generic admission matcher decides: namespaceSelector, then
 * objectSelector, then excludeResourceRules (an exclusion wins), then resourceRules (none: all).
 * A selector that cannot be read is an error the caller hands to failurePolicy.
 */
import { isObject, listAt, stringAt, stringsOf, type JsonObject } from '../api/json-access.js';
import type { KubeObject } from '../api/types.js';
import { matchesLabels } from '../selectors/label-selector.js';
import { selectorRequirements } from '../resources/label-selector-object.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What matching looks at in a request. */
export interface MatchAttributes {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespaced: boolean;
  name: string;
  namespace: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  /**
   * The labels namespaceSelector is matched against: the object's namespace, or the Namespace
   * itself when one is written; undefined for other cluster-scoped objects (always matched).
   */
  namespaceLabels: Record<string, string> | undefined;
}

const has = (list: string[], v: string): boolean => list.includes('*') || list.includes(v);

/** One NamedRuleWithOperations (or RuleWithOperations) against the request. */
export function ruleMatches(rule: unknown, a: MatchAttributes): boolean {
  if (!has(stringsOf(listAt(rule, 'operations')), a.operation)) return false;
  if (!has(stringsOf(listAt(rule, 'apiGroups')), a.group)) return false;
  if (!has(stringsOf(listAt(rule, 'apiVersions')), a.version)) return false;
  const scope = stringAt(rule, 'scope') || '*';
  if (scope === 'Cluster' && a.namespaced) return false;
  if (scope === 'Namespaced' && !a.namespaced) return false;
  const names = stringsOf(listAt(rule, 'resourceNames'));
  if (names.length > 0 && !names.includes(a.name)) return false;
  return stringsOf(listAt(rule, 'resources')).some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === a.resource) && (sub === '*' || sub === a.subresource);
  });
}

const labelsOf = (o: KubeObject | null): Record<string, string> | undefined => (o && isObject(o.metadata?.labels) ? (o.metadata.labels as Record<string, string>) : undefined);

/**
 * A holder's namespaceSelector (not applied to cluster-scoped objects other than Namespaces) and
 * objectSelector (the object or the stored one must match): MatchResources and webhooks alike.
 */
export function selectorsMatch(holder: JsonObject, a: MatchAttributes): boolean {
  if (a.namespaceLabels !== undefined) {
    const ns = selectorRequirements(holder.namespaceSelector);
    if (ns.length > 0 && !matchesLabels(ns, a.namespaceLabels)) return false;
  }
  const objSel = selectorRequirements(holder.objectSelector);
  if (objSel.length === 0) return true;
  const hit = (o: KubeObject | null) => o !== null && matchesLabels(objSel, labelsOf(o) ?? {});
  return hit(a.object) || hit(a.oldObject);
}

export function matchesResources(mr: JsonObject | undefined, a: MatchAttributes): boolean {
  if (!mr) return true;
  if (!selectorsMatch(mr, a)) return false;
  if (listAt(mr, 'excludeResourceRules').some((r) => ruleMatches(r, a))) return false;
  const rules = listAt(mr, 'resourceRules');
  return rules.length === 0 || rules.some((r) => ruleMatches(r, a));
}
