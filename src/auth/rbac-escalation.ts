/**
 * RBAC's escalation prevention (Kubernetes' pkg/registry/rbac policybased storage and
 * component-helpers' Covers): a user may only write a role, or bind one, whose permissions they
 * already hold where it applies, unless the authorizer lets them `escalate` on that role (for roles)
 * or `bind` it (for bindings), or they are in system:masters. Without this, anyone allowed to write
 * roles could grant themselves everything.
 *
 *   user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
 *   {APIGroups:["events.orch.io"], Resources:["events"], Verbs:["delete" "update"]}
 *
 * It is the server's to call on creates and updates of the four kinds, with the authorizer chain in
 * force, and only when RBAC is part of that chain (with AlwaysAllow nobody could write a role).
 */
import type { AuthorizationAttributes, Authorizer } from '../api/authorization.js';
import { appliesTo, roleReferenceRules, type RbacBinding, type RbacPolicyRule, type RbacSource } from './rbac-authorizer.js';
import { RBAC_GROUP } from '../api/groups.js';

const ALL = '*';
const PRIVILEGED_GROUP = 'system:masters';

/** Everything: what an aggregationRule could gather, so only cluster admins may set one. */
const FULL_AUTHORITY: RbacPolicyRule[] = [
  { verbs: [ALL], apiGroups: [ALL], resources: [ALL] },
  { verbs: [ALL], nonResourceURLs: [ALL] },
];

export interface EscalationRequest {
  user: AuthorizationAttributes['user'];
  kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';
  /** '' for the cluster-scoped kinds. */
  namespace: string;
  name: string;
  /** Roles: the rules written. */
  rules?: readonly RbacPolicyRule[];
  /** ClusterRoles: whether an aggregationRule is set. */
  aggregates?: boolean;
  /** Bindings: the role bound. */
  roleRef?: RbacBinding['roleRef'];
}

/** Why the write is refused: forbidden (the detail of the 403), or a binding names a role that does not exist. */
export type EscalationRefusal = { reason: 'Forbidden'; detail: string } | { reason: 'RoleNotFound'; kind: string; name: string };

const list = (l: readonly string[] | undefined): readonly string[] => l ?? [];

/** One rule per verb × group × resource × name, or per verb × URL: each is covered by a single owner rule or not at all. */
function breakdown(rule: RbacPolicyRule): RbacPolicyRule[] {
  const out: RbacPolicyRule[] = [];
  for (const group of list(rule.apiGroups))
    for (const resource of list(rule.resources))
      for (const verb of list(rule.verbs)) {
        const names = list(rule.resourceNames);
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
      }
  for (const url of list(rule.nonResourceURLs)) for (const verb of list(rule.verbs)) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const hasAll = (set: readonly string[], wanted: readonly string[]): boolean => wanted.every((w) => set.includes(w));

/** An owner's "*" covers every resource, "*\/sub" that subresource of every resource. */
const resourcesCovered = (owner: readonly string[], wanted: readonly string[]): boolean =>
  owner.includes(ALL) || wanted.every((r) => owner.includes(r) || (r.includes('/') && owner.includes(`*/${r.slice(r.indexOf('/') + 1)}`)));

const urlCovers = (owner: string, wanted: string): boolean => owner === wanted || (owner.endsWith('*') && wanted.startsWith(owner.replace(/\*+$/, '')));

function ruleCovers(owner: RbacPolicyRule, sub: RbacPolicyRule): boolean {
  const ownerNames = list(owner.resourceNames);
  const subNames = list(sub.resourceNames);
  return (
    (list(owner.verbs).includes(ALL) || hasAll(list(owner.verbs), list(sub.verbs))) &&
    (list(owner.apiGroups).includes(ALL) || hasAll(list(owner.apiGroups), list(sub.apiGroups))) &&
    resourcesCovered(list(owner.resources), list(sub.resources)) &&
    list(sub.nonResourceURLs).every((u) => list(owner.nonResourceURLs).some((o) => urlCovers(o, u))) &&
    (ownerNames.length === 0 || (subNames.length > 0 && hasAll(ownerNames, subNames)))
  );
}

/** The parts of `wanted` no owner rule covers, broken down to single verbs, resources and names. */
export function uncovered(owner: readonly RbacPolicyRule[], wanted: readonly RbacPolicyRule[]): RbacPolicyRule[] {
  return wanted.flatMap(breakdown).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** Go's %q of a []string: ["a" "b"]. */
const goQuoted = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/** Kubernetes' CompactString: only the fields a rule sets, in a fixed order. */
function compactString(r: RbacPolicyRule): string {
  const parts: string[] = [];
  if (list(r.apiGroups).length) parts.push(`APIGroups:${goQuoted(list(r.apiGroups))}`);
  if (list(r.resources).length) parts.push(`Resources:${goQuoted(list(r.resources))}`);
  if (list(r.nonResourceURLs).length) parts.push(`NonResourceURLs:${goQuoted(list(r.nonResourceURLs))}`);
  if (list(r.resourceNames).length) parts.push(`ResourceNames:${goQuoted(list(r.resourceNames))}`);
  if (list(r.verbs).length) parts.push(`Verbs:${goQuoted(list(r.verbs))}`);
  return `{${parts.join(', ')}}`;
}

/** Missing rules of one group and one resource (no names) are listed once, with their verbs together (Kubernetes' CompactRules). */
function compact(rules: RbacPolicyRule[]): RbacPolicyRule[] {
  const merged = new Map<string, RbacPolicyRule & { verbs: string[] }>();
  const out: RbacPolicyRule[] = [];
  for (const r of rules) {
    const simple = list(r.apiGroups).length === 1 && list(r.resources).length === 1 && !list(r.resourceNames).length && !list(r.nonResourceURLs).length;
    if (!simple) {
      out.push(r);
      continue;
    }
    const key = `${list(r.apiGroups)[0]}\0${list(r.resources)[0]}`;
    const m = merged.get(key);
    if (m) m.verbs.push(...list(r.verbs));
    else merged.set(key, { ...r, verbs: [...list(r.verbs)] });
  }
  return [...merged.values(), ...out];
}

/** Every rule RBAC grants the user in a namespace ('': cluster-wide only); missing roles grant nothing. */
function rulesFor(source: RbacSource, user: AuthorizationAttributes['user'], namespace: string): RbacPolicyRule[] {
  const bindings = [...source.clusterRoleBindings(), ...(namespace ? source.roleBindings(namespace) : [])];
  return bindings
    .filter((b) => b.subjects.some((s) => appliesTo(user, s, b.namespace)))
    .flatMap((b) => {
      const rules = roleReferenceRules(source, b);
      return typeof rules === 'string' ? [] : rules;
    });
}

function notHeld(source: RbacSource, req: EscalationRequest, wanted: readonly RbacPolicyRule[]): string | undefined {
  const missing = uncovered(rulesFor(source, req.user, req.namespace), wanted);
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compact(missing).map(compactString))].sort();
  return `user ${JSON.stringify(req.user.username)} (groups=${goQuoted(req.user.groups ?? [])}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
}

const pluralOf = (kind: string): string => `${kind.toLowerCase()}s`;

/**
 * The check of one create or update; undefined lets it through. `authorizer` is the chain in force,
 * asked whether the user may `escalate` the role or `bind` the role referenced.
 */
export function rbacEscalationCheck(source: RbacSource, authorizer: Authorizer): (req: EscalationRequest) => Promise<EscalationRefusal | undefined> {
  const allowed = async (req: EscalationRequest, verb: string, resource: string, name: string): Promise<boolean> =>
    (await authorizer.authorize({ user: req.user, verb, isResourceRequest: true, apiGroup: RBAC_GROUP, apiVersion: '*', resource, namespace: req.namespace, name })).decision === 'allow';

  return async (req) => {
    if ((req.user.groups ?? []).includes(PRIVILEGED_GROUP)) return undefined;
    const forbidden = (detail: string): EscalationRefusal => ({ reason: 'Forbidden', detail });
    if (req.kind === 'Role' || req.kind === 'ClusterRole') {
      if (await allowed(req, 'escalate', pluralOf(req.kind), req.name)) return undefined;
      const detail = notHeld(source, req, req.rules ?? []);
      if (detail) return forbidden(detail);
      if (req.aggregates && notHeld(source, req, FULL_AUTHORITY)) return forbidden('must have cluster-admin privileges to use the aggregationRule');
      return undefined;
    }
    const ref = req.roleRef ?? { kind: '', name: '' };
    if (await allowed(req, 'bind', pluralOf(ref.kind), ref.name)) return undefined;
    const rules = ref.kind === 'Role' ? source.role(req.namespace, ref.name) : ref.kind === 'ClusterRole' ? source.clusterRole(ref.name) : undefined;
    if (!rules) return { reason: 'RoleNotFound', kind: ref.kind, name: ref.name };
    const detail = notHeld(source, req, rules);
    return detail ? forbidden(detail) : undefined;
  };
}
