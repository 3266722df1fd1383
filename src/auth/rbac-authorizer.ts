/**
 * The RBAC authorizer (Kubernetes' plugin/pkg/auth/authorizer/rbac): a request is allowed when a
 * rule of a role bound to its user allows it. ClusterRoleBindings are visited first, then the
 * RoleBindings of the request's namespace; the first allowing rule wins and names its binding in the
 * reason:
 *
 *   RBAC: allowed by RoleBinding "read-events/dev" of Role "reader" to User "alice"
 *
 * RBAC never denies: without an allowing rule it has no opinion, and the next authorizer of the
 * chain decides. Roles that could not be found are named in the reason, since they may be why.
 * It answers synchronously, so admission's CEL `authorizer` can ask it too.
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../api/authorization.js';
import { RBAC_GROUP } from '../api/groups.js';

export interface RbacPolicyRule {
  verbs?: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
}

export interface RbacSubject {
  kind: string;
  name: string;
  namespace?: string;
}

export interface RbacBinding {
  name: string;
  /** Empty for a ClusterRoleBinding. */
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: readonly RbacSubject[];
}

/**
 * What RBAC reads: the roles and bindings in force. The caller keeps them (orchd reads them from its
 * store); lookups must be cheap, they run on every request.
 */
export interface RbacSource {
  /** Rules of the Role, or undefined when there is none. */
  role(namespace: string, name: string): readonly RbacPolicyRule[] | undefined;
  clusterRole(name: string): readonly RbacPolicyRule[] | undefined;
  roleBindings(namespace: string): readonly RbacBinding[];
  clusterRoleBindings(): readonly RbacBinding[];
}

const ALL = '*';

const has = (list: readonly string[] | undefined, value: string): boolean => !!list && (list.includes(ALL) || list.includes(value));

/**
 * `resource/subresource` matches itself, `*` everything, and `*\/sub` that subresource of any resource.
 * resourceNames, when given, must name the object: a list or a create without a name never matches.
 */
function ruleAllows(a: AuthorizationAttributes, rule: RbacPolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceURLMatches(rule.nonResourceURLs ?? [], a.path ?? '');
  const sub = a.subresource ?? '';
  const combined = sub ? `${a.resource ?? ''}/${sub}` : (a.resource ?? '');
  const resourceMatches = (rule.resources ?? []).some((r) => r === ALL || r === combined || (sub !== '' && r === `*/${sub}`));
  const names = rule.resourceNames ?? [];
  return has(rule.apiGroups, a.apiGroup ?? '') && resourceMatches && (names.length === 0 || names.includes(a.name ?? ''));
}

/** A trailing `*` is a prefix match: `/apis/*` allows `/apis/events.orch.io/v1`. */
const nonResourceURLMatches = (urls: readonly string[], path: string): boolean => urls.some((u) => u === ALL || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))));

/** A RoleBinding's service account without a namespace is one of the binding's namespace. */
export function appliesTo(user: AuthorizationAttributes['user'], s: RbacSubject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name;
    case 'Group':
      return (user.groups ?? []).includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.username === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

const describeSubject = (s: RbacSubject, bindingNamespace: string): string =>
  s.kind === 'ServiceAccount' ? `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}` : `${s.kind} ${JSON.stringify(s.name)}`;

function describeBinding(b: RbacBinding, s: RbacSubject): string {
  const name = b.namespace ? `RoleBinding ${JSON.stringify(`${b.name}/${b.namespace}`)}` : `ClusterRoleBinding ${JSON.stringify(b.name)}`;
  return `${name} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, b.namespace)}`;
}

/** Kubernetes' aggregate of errors: one as itself, several (without repeats) in brackets. */
function aggregate(errors: string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

/** An authorizer that answers at once: RBAC is one, so admission's synchronous CEL can ask it. */
export interface SyncAuthorizer extends Authorizer {
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision;
}

/** The rules of the role a binding references, or why there are none (Kubernetes' GetRoleReferenceRules). */
export function roleReferenceRules(source: RbacSource, b: RbacBinding): readonly RbacPolicyRule[] | string {
  const { kind, name } = b.roleRef;
  const rules = kind === 'Role' ? (b.namespace ? source.role(b.namespace, name) : undefined) : kind === 'ClusterRole' ? source.clusterRole(name) : undefined;
  if (rules) return rules;
  if (kind !== 'Role' && kind !== 'ClusterRole') return `unsupported role reference kind: ${JSON.stringify(kind)}`;
  return `${kind.toLowerCase()}.${RBAC_GROUP} ${JSON.stringify(name)} not found`;
}

export function rbacAuthorizer(source: RbacSource): SyncAuthorizer {
  return {
    authorize(a) {
      const errors: string[] = [];
      const bindings = [...source.clusterRoleBindings(), ...(a.namespace ? source.roleBindings(a.namespace) : [])];
      for (const b of bindings) {
        const subject = b.subjects.find((s) => appliesTo(a.user, s, b.namespace));
        if (!subject) continue;
        const rules = roleReferenceRules(source, b);
        if (typeof rules === 'string') {
          errors.push(rules);
          continue;
        }
        if (rules.some((r) => ruleAllows(a, r))) return { decision: 'allow', reason: `RBAC: allowed by ${describeBinding(b, subject)}` };
      }
      return { decision: 'noOpinion', reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
    },
  };
}
