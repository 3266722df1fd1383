import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../auth/user.js';
import type { Logger } from '../observability/logger.js';
import type { ResourceRoute } from './router.js';

/** Kubernetes' request verbs (audit and RBAC spell them so), from the method and the path's shape. */
function verbOf(method: string, r: ResourceRoute): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return r.name === undefined ? 'deletecollection' : 'delete';
    default:
      return r.name === undefined ? 'list' : 'get';
  }
}

/**
 * The audit annotations admission adds to one request. orchd has no audit backend: a request that
 * got any is recorded as one `audit` log line when it completes, shaped like the audit.k8s.io Event
 * Kubernetes would write at ResponseComplete (verb, requestURI, user, objectRef, responseStatus,
 * annotations), so the same tools can read it.
 */
export class RequestAudit {
  private readonly annotations: Record<string, string> = {};
  private count = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly route: ResourceRoute,
    private readonly user: UserInfo,
  ) {}

  /** The first value of a key stays, as Kubernetes' admission attributes keep it. */
  readonly annotate = (key: string, value: string): void => {
    if (Object.hasOwn(this.annotations, key)) return;
    this.annotations[key] = value;
    this.count++;
  };

  /** Writes the line, if admission annotated the request. */
  write(logger: Logger, code: number): void {
    if (this.count === 0) return;
    const r = this.route;
    logger.info('audit', {
      stage: 'ResponseComplete',
      verb: verbOf(this.req.method ?? 'GET', r),
      requestURI: this.req.url,
      user: { username: this.user.username, uid: this.user.uid, groups: this.user.groups },
      objectRef: {
        resource: r.kind.plural,
        ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
        ...(r.name !== undefined ? { name: r.name } : {}),
        apiGroup: r.kind.group,
        apiVersion: r.version,
        ...(r.subresource ? { subresource: r.subresource } : {}),
      },
      responseStatus: { code },
      annotations: this.annotations,
    });
  }
}
