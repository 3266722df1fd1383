/**
 * The authorization step of every request, after authentication and before routing (Kubernetes'
 * WithAuthorization filter): allowed goes on; refused with an authorizer error is a 500 (the
 * decision could not be made); refused otherwise is a 403 worded as Kubernetes words it:
 *
 *   events is forbidden: User "alice" cannot list resource "events" in API group "" in the namespace "default"
 *   forbidden: User "alice" cannot get path "/version"
 *
 * followed by `: <reason>` when the chain gave one.
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../api/authorization.js';
import { forbiddenRequest, internalError, type ApiError } from './respond/status.js';

function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = `User ${JSON.stringify(a.user.username)}`;
  if (!a.isResourceRequest) return `${user} cannot ${a.verb} path ${JSON.stringify(a.path ?? '')}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : (a.resource ?? '');
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup ?? '')} ${scope}`;
}

/** The error a refused request is answered with; undefined when the decision allows it. */
export function refusal(a: AuthorizationAttributes, d: AuthorizationDecision): ApiError | undefined {
  if (d.decision === 'allow') return undefined;
  if (d.error) return internalError(d.error);
  const message = forbiddenMessage(a);
  return forbiddenRequest(a.isResourceRequest ? (a.apiGroup ?? '') : '', a.isResourceRequest ? (a.resource ?? '') : '', a.name ?? '', d.reason ? `${message}: ${d.reason}` : message);
}

/** Resolves when allowed; throws the refusal otherwise. Synchronous when the chain answers synchronously. */
export function authorize(authorizer: Authorizer, a: AuthorizationAttributes): void | Promise<void> {
  const d = authorizer.authorize(a);
  if ('then' in d) {
    return d.then((decided) => {
      const err = refusal(a, decided);
      if (err) throw err;
    });
  }
  const err = refusal(a, d);
  if (err) throw err;
}
