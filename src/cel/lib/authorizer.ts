/**
 * Kubernetes' authorizer library, the `authorizer` variable of admission expressions:
 *   authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('update').allowed()
 *   authorizer.path('/healthz').check('get').reason()
 *   authorizer.serviceAccount('ns', 'sa').resource('pods').check('create').allowed()
 *   authorizer.requestResource.check('delete').errored()
 * The decision comes from a CelAuthorizer the caller passes in at evaluation time (the auth room
 * implements it). Expressions are evaluated synchronously, so it answers synchronously.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { AuthorizationAttributes, AuthorizationDecision, CelUserInfo } from '../../api/authorization.js';
import { celError, sync } from './common.js';

export type { AuthorizationAttributes, AuthorizationDecision, Authorizer, CelUserInfo } from '../../api/authorization.js';

export interface CelAuthorizer {
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision;
}

/** The values behind `authorizer`: who asks, and the resource of the request being admitted. */
export class AuthorizerValue {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly user: CelUserInfo,
    readonly requestResource: ResourceCheck,
  ) {}
}

export class PathCheck {
  constructor(
    readonly authz: AuthorizerValue,
    readonly path: string,
  ) {}
}

export class GroupCheck {
  constructor(
    readonly authz: AuthorizerValue,
    readonly group: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly authz: AuthorizerValue | undefined,
    readonly attrs: Omit<AuthorizationAttributes, 'user' | 'verb' | 'isResourceRequest'>,
  ) {}
  with(patch: Partial<ResourceCheck['attrs']>): ResourceCheck {
    return new ResourceCheck(this.authz, { ...this.attrs, ...patch });
  }
}

export class Decision {
  constructor(readonly d: AuthorizationDecision) {}
}

/** The authorizer variable for one request. */
export function authorizerValue(
  authorizer: CelAuthorizer,
  user: CelUserInfo,
  request: { group: string; version: string; resource: string; subresource?: string; namespace?: string; name?: string },
): AuthorizerValue {
  const check = new ResourceCheck(undefined, {
    apiGroup: request.group,
    apiVersion: request.version,
    resource: request.resource,
    subresource: request.subresource ?? '',
    namespace: request.namespace ?? '',
    name: request.name ?? '',
  });
  const value = new AuthorizerValue(authorizer, user, check);
  (check as { authz: AuthorizerValue }).authz = value;
  return value;
}

function decide(authz: AuthorizerValue, attrs: AuthorizationAttributes): Decision {
  const d = authz.authorizer.authorize(attrs);
  if (d && typeof (d as unknown as Promise<unknown>).then === 'function') throw celError('authorizer returned a promise; CEL evaluation is synchronous');
  return new Decision(d);
}

export function registerAuthorizer(env: Environment): void {
  const A = 'kubernetes.authorization.Authorizer';
  const P = 'kubernetes.authorization.PathCheck';
  const G = 'kubernetes.authorization.GroupCheck';
  const R = 'kubernetes.authorization.ResourceCheck';
  const D = 'kubernetes.authorization.Decision';
  env.registerType(R, ResourceCheck);
  env.registerType(P, PathCheck);
  env.registerType(G, GroupCheck);
  env.registerType(D, Decision);
  env.registerType(A, { ctor: AuthorizerValue, fields: { requestResource: R } });
  env.registerFunction(`${A}.path(string): ${P}`, (a: AuthorizerValue, p: string) => new PathCheck(a, p), sync);
  env.registerFunction(`${A}.group(string): ${G}`, (a: AuthorizerValue, g: string) => new GroupCheck(a, g), sync);
  env.registerFunction(
    `${A}.serviceAccount(string, string): ${A}`,
    (a: AuthorizerValue, ns: string, name: string) => {
      const user: CelUserInfo = { username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`] };
      const sa = new AuthorizerValue(a.authorizer, user, a.requestResource);
      return sa;
    },
    sync,
  );
  env.registerFunction(`${G}.resource(string): ${R}`, (g: GroupCheck, r: string) => new ResourceCheck(g.authz, { apiGroup: g.group, resource: r }), sync);
  env.registerFunction(`${R}.subresource(string): ${R}`, (c: ResourceCheck, s: string) => c.with({ subresource: s }), sync);
  env.registerFunction(`${R}.namespace(string): ${R}`, (c: ResourceCheck, s: string) => c.with({ namespace: s }), sync);
  env.registerFunction(`${R}.name(string): ${R}`, (c: ResourceCheck, s: string) => c.with({ name: s }), sync);
  env.registerFunction(`${R}.fieldSelector(string): ${R}`, (c: ResourceCheck, s: string) => c.with({ fieldSelector: s }), sync);
  env.registerFunction(`${R}.labelSelector(string): ${R}`, (c: ResourceCheck, s: string) => c.with({ labelSelector: s }), sync);
  env.registerFunction(
    `${R}.check(string): ${D}`,
    (c: ResourceCheck, verb: string) => {
      if (!c.authz) throw celError('authorizer is not available');
      return decide(c.authz, { ...c.attrs, user: c.authz.user, verb, isResourceRequest: true });
    },
    sync,
  );
  env.registerFunction(`${P}.check(string): ${D}`, (p: PathCheck, verb: string) => decide(p.authz, { user: p.authz.user, verb, isResourceRequest: false, path: p.path }), sync);
  env.registerFunction(`${D}.allowed(): bool`, (d: Decision) => d.d.decision === 'allow', sync);
  env.registerFunction(`${D}.reason(): string`, (d: Decision) => d.d.reason ?? '', sync);
  env.registerFunction(`${D}.errored(): bool`, (d: Decision) => !!d.d.error, sync);
  env.registerFunction(`${D}.error(): string`, (d: Decision) => d.d.error ?? '', sync);
}
