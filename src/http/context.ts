import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { Metrics } from '../observability/metrics.js';
import type { Registry } from '../registry/registry.js';
import type { Output } from './respond/respond.js';
import type { ResourceRoute } from './router.js';
import type { Logger } from '../observability/logger.js';
import type { UserInfo } from '../auth/user.js';
import type { Faults, FaultHit } from '../faults/faults.js';
import type { OpenWatches } from './open-watches.js';
import type { WatchStreams } from './handlers/watch-stream.js';

/** What every handler is given: the parsed request and the server's parts, passed explicitly. */
export interface Server {
  /** The one door to the objects: every get, list, watch and write goes through it. */
  objects: Registry;
  kinds: readonly KindStrategy[];
  metrics: Metrics;
  logger: Logger;
  /** Every open watch, by the function that ends it (with why, its last event is an ERROR saying it: a 410 Expired tells a client to list again), so shutdown can end them, and their count (startOrchd's watchers() waits on it). */
  watches: OpenWatches;
  /** Runs the watches, sharing the bytes of a batch between the watchers handed it one after another. */
  streams: WatchStreams;
  bookmarkIntervalMs: number;
  /** Overrides of the watch sinks' buffer bound, high-water mark, grace period and stall timeout (flags, tests). */
  watchLimits?: { maxBuffered?: number; highWater?: number; graceMs?: number; stallTimeoutMs?: number };
  /** Faults on demand (FaultConfiguration): the rules, and the journal of what was injected. */
  faults?: Faults;
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
  /** The fault a rule decided for this request (src/faults), acted on by the handler: a watch fault, a stale read. */
  fault?: FaultHit;
  /** Adds an annotation to the request's audit event. */
  annotate?: (key: string, value: string) => void;
}
