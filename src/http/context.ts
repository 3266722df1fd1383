import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindStrategy, KubeObject } from '../registry/kinds.js';
import type { Metrics } from '../observability/metrics.js';
import type { ObjectStore } from '../registry/object-store.js';
import type { Output } from './respond/respond.js';
import type { ResourceRoute } from './router.js';
import type { Logger } from '../observability/logger.js';
import type { UserInfo } from '../auth/user.js';

/** What every handler is given: the parsed request and the server's parts, passed explicitly. */
export interface Server {
  /** The one door to the objects: every get, list, watch and write goes through it. */
  objects: ObjectStore;
  kinds: readonly KindStrategy[];
  metrics: Metrics;
  logger: Logger;
  /** Called with every open watch so shutdown can end them; with why, the watch's last event is an ERROR saying it (a 410 Expired tells a client to list again). */
  watches: Set<(why?: unknown) => void>;
  /** Told whenever a watch opens or ends (startOrchd's watchers() waits on it). */
  watchesChanged?: () => void;
  bookmarkIntervalMs: number;
  /** Overrides of the watch sinks' buffer bound, high-water mark, grace period and stall timeout (flags, tests). */
  watchLimits?: { maxBuffered?: number; highWater?: number; graceMs?: number; stallTimeoutMs?: number };
}

export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  route: ResourceRoute;
  out: Output;
  server: Server;
  /** Who is asking (authentication ran before routing): for the authorizer and admission's userInfo. */
  user: UserInfo;
  /** The object the request carries, decoded (a create's or a replace's): the audit event names it (RequestAudit.requestObject). */
  requestObject?: (obj: KubeObject) => void;
}
