import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthorizationAttributes } from '../api/authorization.js';
import type { UserInfo } from '../auth/user.js';
import { auditLevelOf, type AuditPolicy } from '../config/audit-policy.js';
import type { Logger } from '../observability/logger.js';
import type { KubeObject, ObjectMeta } from '../api/types.js';
import type { Status } from './respond/status.js';

/** Where audit events go (`--audit-log-path`: audit-file.ts), and which requests they are for. */
export interface AuditSink {
  policy: AuditPolicy;
  write(event: Record<string, unknown>): void;
  /** Writes what is buffered; the API server closes it when it closes. */
  close(): Promise<void>;
}

/** Kubernetes' audit annotation of the authorizer's decision (orch.io in place of k8s.io, as every annotation key). */
export const DECISION_ANNOTATION = 'authorization.orch.io/decision';

const nonEmpty = (key: string, value: string | undefined): Record<string, string> => (value ? { [key]: value } : {});

const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

/**
 * The audit record of one request, from the moment it is authenticated to its answer: the annotations
 * admission and the authorizer add, then one audit.k8s.io Event at ResponseComplete, as Kubernetes
 * writes it (verb, user, objectRef, responseStatus, annotations). With an audit log (a sink), every
 * request its policy selects goes there; without one, a request that admission annotated is still
 * recorded as one `audit` line of the server's log.
 */
export class RequestAudit {
  private readonly annotations: Record<string, string> = {};
  private count = 0;
  private readonly received = Date.now();
  private failure: Status | undefined;
  /** What the request's own object names, where the URL does not (a create's name). */
  private carried: Pick<ObjectMeta, 'namespace' | 'name' | 'uid' | 'resourceVersion'> = {};

  constructor(
    private readonly req: IncomingMessage,
    private readonly user: UserInfo,
    private readonly attributes: AuthorizationAttributes | undefined,
  ) {}

  /** The first value of a key stays, as Kubernetes' admission attributes keep it. */
  readonly annotate = (key: string, value: string): void => {
    if (Object.hasOwn(this.annotations, key)) return;
    this.annotations[key] = value;
    this.count++;
  };

  /**
   * The object the request carries: its namespace, name, uid and resourceVersion complete the
   * objectRef where the URL leaves them out, at every level, as kube-apiserver's audit does, so a
   * refused create is named.
   */
  readonly requestObject = (obj: KubeObject): void => {
    const { namespace, name, uid, resourceVersion } = obj.metadata;
    this.carried = { namespace, name, uid, resourceVersion };
  };

  /** The request was refused or failed with this Status. */
  failed(status: Status): void {
    this.failure = status;
  }

  private event(code: number): Record<string, unknown> {
    const a = this.attributes;
    const f = this.failure;
    return {
      requestURI: this.req.url,
      verb: a?.verb ?? (this.req.method ?? 'GET').toLowerCase(),
      user: { username: this.user.username, ...(this.user.uid ? { uid: this.user.uid } : {}), groups: this.user.groups },
      ...(a?.isResourceRequest
        ? {
            objectRef: {
              resource: a.resource,
              ...nonEmpty('namespace', a.namespace || this.carried.namespace),
              ...nonEmpty('name', a.name || this.carried.name),
              ...nonEmpty('uid', this.carried.uid),
              apiGroup: a.apiGroup,
              apiVersion: a.apiVersion,
              ...nonEmpty('resourceVersion', this.carried.resourceVersion),
              ...(a.subresource ? { subresource: a.subresource } : {}),
            },
          }
        : {}),
      responseStatus: { metadata: {}, code, ...(f && code === f.code ? { status: 'Failure', message: f.message, reason: f.reason } : {}) },
      annotations: this.annotations,
    };
  }

  /** Records the request, answered with code: into the sink as its policy says, else (annotated only) into the log. */
  write(logger: Logger, code: number, sink?: AuditSink): void {
    if (!sink) {
      if (this.count > 0) logger.info('audit', { stage: 'ResponseComplete', ...this.event(code) });
      return;
    }
    const a = this.attributes;
    const { level, omitStages } = auditLevelOf(sink.policy, {
      user: this.user,
      verb: a?.verb ?? (this.req.method ?? 'GET').toLowerCase(),
      ...(a?.isResourceRequest
        ? { resource: { group: a.apiGroup ?? '', resource: a.resource ?? '', subresource: a.subresource, namespace: a.namespace, name: a.name } }
        : { path: a?.path ?? this.req.url?.split('?')[0] }),
    });
    if (level === 'None' || omitStages.includes('ResponseComplete')) return;
    const forwarded = this.req.headers['x-forwarded-for'];
    sink.write({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level,
      auditID: randomUUID(),
      stage: 'ResponseComplete',
      ...this.event(code),
      sourceIPs: [...(typeof forwarded === 'string' ? forwarded.split(',').map((s) => s.trim()) : []), this.req.socket.remoteAddress ?? ''].filter(Boolean),
      ...(this.req.headers['user-agent'] ? { userAgent: this.req.headers['user-agent'] } : {}),
      requestReceivedTimestamp: microTime(this.received),
      stageTimestamp: microTime(Date.now()),
    });
  }
}
