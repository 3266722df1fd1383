import { STATUS_CODES, createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { LISTEN_BACKLOG, type HandoverPort } from './handover-port.js';
import type { WebSocketServer } from 'ws';
import type { KindStrategy } from '../api/strategy.js';
import { kindIndex } from '../api/kind-index.js';
import type { Registry } from '../registry/registry.js';
import { rfc3339 } from '../registry/object-meta.js';
import { asRequest } from '../registry/request.js';
import type { Server } from './context.js';
import { DECISION_ANNOTATION, RequestAudit, type AuditSink } from './audit-log.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, RequestLabels } from '../observability/metrics.js';
import type { Sample } from '../observability/samples.js';
import { requestLabels } from './request-labels.js';
import { addWarnings, sendError, type Output } from './respond/respond.js';
import { route, type Route } from './router.js';
import { handleResource, outputFor } from './handlers/resource.js';
import { upgradeWatch, watchSocketServerOptions } from './handlers/watch.js';
import { handleDiscovery, handleOpenApi } from './handlers/discovery.js';
import { type ApiError, pathNotFound, serviceUnavailable, unauthorized } from './respond/status.js';
import { toApiError, toStatus } from './respond/errors.js';
import { RequestAuthenticator, type Authenticator } from '../auth/authenticate.js';
import { managerFromUserAgent } from '../registry/field-manager.js';
import { traceRequest } from './request-span.js';
import { alwaysAllow } from '../auth/authorization-chain.js';
import type { Authorizer } from '../api/authorization.js';
import { authorize } from './authorize.js';
import type { ForkPoint } from '../config/fork-origin.js';
import { handleDebugLog } from './handlers/debug-log.js';
import { handleDebugFaults } from './handlers/debug-faults.js';
import { Faults, type FaultsOptions } from '../faults/faults.js';
import { faultsBefore } from './faults.js';
import { requestAttributes } from './request-attributes.js';
import { requestTarget, type RequestTarget } from './request-target.js';
import { answerClientError, connectAsRequest } from './raw-requests.js';
import { DEFAULT_INFLIGHT_LIMITS, InflightLimiter, type InflightLimits } from './inflight.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, arrivalBounds, cutSlowClients } from './slow-clients.js';
import { OpenWatches } from './open-watches.js';
import { WatchStreams } from './handlers/watch-stream.js';
import type { UserInfo } from '../auth/user.js';

export interface ApiServerOptions {
  /** The one door to the objects (registry/build.ts builds it with admission as configured). */
  objects: Registry;
  kinds: readonly KindStrategy[];
  metrics: Metrics;
  logger: Logger;
  bookmarkIntervalMs?: number;
  /** Watch buffer bound and stall timeout (--watch-buffer, --watch-stall-timeout). */
  watchLimits?: Server['watchLimits'];
  /** Who is asking; without one every request is anonymous (no authentication configured). */
  authenticator?: Authenticator;
  /** What each user may do; without one everything is allowed (no authorization configured). */
  authorizer?: Authorizer & { samples?(): Sample[] };
  /** Serve HTTPS with this certificate (PEM, leaf first) and key. */
  tls?: { cert: Buffer; key: Buffer };
  /** Checks /readyz and /healthz run besides readiness (kms-providers): each failing one with why. */
  healthChecks?: () => { check: string; problem: string }[];
  /** Requests served at once (`--max-requests-inflight`, `--max-mutating-requests-inflight`); Kubernetes' 400 and 200 by default. */
  inflight?: InflightLimits;
  /** How long a request's headers and body may take to arrive (`--request-timeout`); 60 s by default. */
  requestTimeoutMs?: number;
  /** The audit log (`--audit-log-path`): every request its policy selects is recorded there. */
  audit?: AuditSink;
  /** How long its headers may take; kube-apiserver's 32 s by default (tests shorten it). */
  headersTimeoutMs?: number;
  /** Where the served history was forked (a data folder made by `orchd fork`): /debug/timeline marks them. */
  forks?: readonly ForkPoint[];
  /**
   * Faults on demand: the rules at start and where the journal goes (the data folder of a LevelDB
   * log). Idle without rules; /debug/faults and startOrchd's api.faults set some later.
   */
  faults?: Omit<FaultsOptions, 'head'>;
}

/**
 * The HTTP side of orchd: authentication, authorization, routing to the handlers, readiness and a
 * graceful close. Its state (readiness, requests in flight, the WebSocket server) is shared by the
 * request and upgrade handlers.
 */
export class ApiServer {
  readonly http: HttpServer;
  readonly context: Server;
  private readonly authorizer: NonNullable<ApiServerOptions['authorizer']>;
  private readonly authenticator: Authenticator;
  private readonly limiter: InflightLimiter;
  private readonly faults: Faults | undefined;
  /** Cuts slow clients; a request Node cannot parse is answered with a Status. */
  private readonly receiving: ReturnType<typeof cutSlowClients>;
  private ready = false;
  /** Why /readyz fails and resources are refused while not ready. */
  private notReady = 'the log is being replayed';
  private inFlight = 0;
  private drained: (() => void) | undefined;
  /** Made by the first WebSocket watch: most clients (and embedded test servers) never make one. */
  private wss: WebSocketServer | undefined;

  constructor(private readonly opts: ApiServerOptions) {
    const { objects } = opts;
    this.authorizer = opts.authorizer ?? alwaysAllow;
    this.context = {
      objects,
      kinds: opts.kinds,
      metrics: opts.metrics,
      logger: opts.logger,
      watches: new OpenWatches(),
      streams: new WatchStreams(objects),
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
      ...(opts.watchLimits ? { watchLimits: opts.watchLimits } : {}),
    };
    this.faults = opts.faults ? (this.context.faults = new Faults({ ...opts.faults, head: () => objects.logReader().appliedSeq })) : undefined;
    this.limiter = new InflightLimiter(opts.inflight ?? DEFAULT_INFLIGHT_LIMITS);
    this.authenticator = opts.authenticator ?? new RequestAuthenticator(undefined);
    opts.metrics.readAtScrape(() => [
      ...objects.samples(opts.kinds),
      ...(this.authenticator.samples?.() ?? []),
      ...(this.authorizer.samples?.() ?? []),
      ...this.limiter.samples(),
      ...(this.faults?.samples() ?? []),
    ]);
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.receiving(req, res);
      void traceRequest(req, res, () => this.handle(req, res));
    };
    const serverOptions = { keepAliveTimeout: 65_000, ...arrivalBounds(opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, opts.headersTimeoutMs) };
    this.http = opts.tls ? createHttpsServer({ ...opts.tls, ...serverOptions }, listener) : createServer(serverOptions, listener);
    this.receiving = cutSlowClients(this.http, answerClientError);
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head).catch((err: unknown) => refuseUpgrade(socket, toApiError(err))));
    this.http.on('connect', connectAsRequest(listener));
  }

  /** After the store is rebuilt (and the controllers started, by serve.ts): /readyz says ok. */
  async start(): Promise<void> {
    this.ready = true;
    this.opts.logger.info('serving', { since: rfc3339(new Date()) });
  }

  /** Stops accepting, ends watches, waits for in-flight requests. */
  async close(): Promise<void> {
    this.ready = false;
    this.notReady = 'the server is shutting down';
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    for (const end of this.context.watches) end();
    for (const ws of this.wss?.clients ?? []) ws.close(1001, 'server shutting down');
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.http.closeIdleConnections();
    await closed;
    await this.opts.audit?.close();
    await this.faults?.close();
  }

  /** Asked per request: a CRD's kind comes and goes while the server runs (the index follows the list). */
  private readonly lookup = (g: string, v: string, p: string) => kindIndex(this.opts.kinds).resource(g, v, p);

  /** Kube's answer to failed authentication: the reason goes to the log, never to the client. */
  private unauthenticated(req: IncomingMessage, reason: string): ApiError {
    this.opts.logger.info('unable to authenticate the request', { method: req.method, path: req.url?.split('?')[0], reason });
    return unauthorized();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    this.inFlight++;
    const done: Handled = { out: { format: 'json', pretty: false } };
    try {
      await this.serve(req, res, done);
    } catch (err) {
      const code = sendError(res, err, done.out);
      done.audit?.failed(toStatus(err));
      if (code === 403 && this.opts.authorizer) done.audit?.annotate(DECISION_ANNOTATION, 'forbid');
      // 503 is the not-ready refusal (replay, shutdown): expected, and one line per request would flood the log.
      if (code >= 500 && code !== 503) this.opts.logger.error('request failed', { method: req.method, url: req.url, code, error: err instanceof Error ? err.stack : String(err) });
    } finally {
      done.release?.();
      this.inFlight--;
      done.audit?.write(this.opts.logger, res.statusCode, this.opts.audit);
      const { counted } = done;
      const { metrics } = this.opts;
      // A watch is counted when it ends, as kube-apiserver counts long-running requests.
      if (counted?.verb === 'WATCH') res.once('close', () => metrics.request(counted, res.statusCode, (performance.now() - started) / 1000));
      else if (counted) metrics.request(counted, res.statusCode, (performance.now() - started) / 1000);
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /** The request path in its order: target, authentication, limits, authorization, route. */
  private async serve(req: IncomingMessage, res: ServerResponse, done: Handled): Promise<void> {
    const { opts } = this;
    const target = requestTarget(req.url, req.method);
    const auth = await this.authenticator.authenticate(req.headers, target.path);
    if (!auth.ok) throw this.unauthenticated(req, auth.reason);
    // A path whose attributes cannot be read is counted by its method; the authorizer then refuses it.
    const attributes = attributesOrUndefined(req, target, auth.user);
    const r: Route | undefined = route(target.path, this.lookup);
    // Refusals (429, 403) are counted too, as kube-apiserver counts them; paths naming no resource are not.
    if (r?.type === 'resource' && attributes) done.counted = requestLabels(r, attributes, req.headers['content-type']);
    done.release = this.limiter.admit(attributes ?? { verb: (req.method ?? 'GET').toLowerCase(), isResourceRequest: false }, auth.user);
    // Awaited only when the chain went over the network: a cached decision costs no extra turn.
    // /debug/log is authorized per resource it reads, as a list of it (handlers/debug-log.ts).
    if (opts.audit) done.audit = new RequestAudit(req, auth.user, attributes);
    const authorized = opts.authorizer && !/^\/debug\/log(\/|$)/.test(target.path) && authorize(opts.authorizer, attributes ?? requestAttributes(req, target, auth.user));
    if (authorized) await authorized;
    if (opts.authorizer) done.audit?.annotate(DECISION_ANNOTATION, 'allow');
    if (!r) throw pathNotFound();
    const { url } = target;
    switch (r.type) {
      case 'health':
        return healthz(res, r.check, [...(r.check === 'readyz' && !this.ready ? [{ check: 'readyz', problem: this.notReady }] : []), ...(r.check === 'livez' ? [] : (opts.healthChecks?.() ?? []))]);
      case 'metrics':
        return await sendMetrics(res, opts.metrics);
      case 'discovery':
        return handleDiscovery(req, res, r, opts.kinds);
      case 'openapi':
        return await handleOpenApi(req, res, url, r.path, opts.kinds);
      case 'timeline':
        // The debugging page (and its diff library) is loaded by its first visit.
        return await (await import('./handlers/timeline.js')).handleTimeline(res, url, r.path, opts.objects, opts.forks ?? []);
      case 'debugFaults':
        return await handleDebugFaults(req, res, r.path, this.faults);
      case 'debugLog':
        return await handleDebugLog(res, url, r.path, opts.objects.logReader(), opts.kinds, (a) => (opts.authorizer ? authorize(opts.authorizer, { ...a, user: auth.user }) : undefined));
      case 'resource':
        return await this.resource(req, res, { url, route: r, user: auth.user, attributes, verb: req.method ?? 'GET' }, done);
    }
  }

  /** A request for a resource, once it is authorized: its admission context, its faults, its handler. */
  private async resource(req: IncomingMessage, res: ServerResponse, a: ResourceAsk, done: Handled): Promise<void> {
    const { url, route: r, user, attributes } = a;
    done.out = outputFor(req, url);
    if (!this.ready) throw serviceUnavailable(`the server is not ready: ${this.notReady}`);
    const audited = (done.audit ??= new RequestAudit(req, user, attributes));
    if (r.kind.deprecationWarning) addWarnings(res, [r.kind.deprecationWarning]);
    // What the log keeps of each entry this request writes: who, how, with which field manager (a read writes nothing).
    const reads = req.method === 'GET' || req.method === 'HEAD';
    const write = reads
      ? undefined
      : {
          verb: attributes?.verb ?? a.verb.toLowerCase(),
          ...(r.subresource ? { subresource: r.subresource } : {}),
          manager: url.searchParams.get('fieldManager') ?? managerFromUserAgent(req.headers['user-agent']),
        };
    const admission = { user, warn: (w: readonly string[]) => addWarnings(res, w), annotate: audited.annotate, ...(write ? { write } : {}) };
    const faults = this.faults;
    const fault = faults?.active && attributes ? await faultsBefore(faults, attributes, req, res, url, r, audited.annotate) : undefined;
    const out = done.out;
    await asRequest(admission, () =>
      handleResource({ req, res, url, route: r, out, server: this.context, user, requestObject: audited.requestObject, annotate: audited.annotate, ...(fault ? { fault } : {}) }),
    );
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const target = requestTarget(req.url, req.method);
    const auth = await this.authenticator.authenticate(req.headers, target.path).catch((err: unknown) => ({ ok: false as const, reason: String(err) }));
    if (!auth.ok) return refuseUpgrade(socket, this.unauthenticated(req, auth.reason));
    try {
      if (this.opts.authorizer) await authorize(this.opts.authorizer, requestAttributes(req, target, auth.user));
    } catch (err) {
      return refuseUpgrade(socket, toApiError(err));
    }
    const r = route(target.path, this.lookup);
    if (!this.ready) return refuseUpgrade(socket, serviceUnavailable(`the server is not ready: ${this.notReady}`));
    if (!r || r.type !== 'resource') return refuseUpgrade(socket, pathNotFound());
    // ws is loaded by the first WebSocket watch.
    const wss = (this.wss ??= new (await import('ws')).WebSocketServer(watchSocketServerOptions));
    upgradeWatch(wss, req, socket, head, { url: target.url, route: r, server: this.context });
  }
}

/** What a request's handling found out that its answer, its audit event and its metrics need afterwards. */
interface Handled {
  /** How an error is written (the resource's output format once known). */
  out: Output;
  audit?: RequestAudit;
  /** Set once the path names a resource: the request is then counted in /metrics. */
  counted?: RequestLabels;
  /** Gives back the request's in-flight seat. */
  release?: () => void;
}

/** An authorized request for a resource. */
interface ResourceAsk {
  url: URL;
  route: Extract<Route, { type: 'resource' }>;
  user: UserInfo;
  attributes: ReturnType<typeof attributesOrUndefined>;
  verb: string;
}

/** The server, as serve.ts and startOrchd make it. */
export const createApiServer = (opts: ApiServerOptions): ApiServer => new ApiServer(opts);

/** The request's authorization attributes, or undefined for a path they cannot be read from. */
function attributesOrUndefined(req: IncomingMessage, target: RequestTarget, user: Parameters<typeof requestAttributes>[2]) {
  try {
    return requestAttributes(req, target, user);
  } catch {
    return undefined;
  }
}

async function sendMetrics(res: ServerResponse, metrics: Metrics): Promise<void> {
  const text = await metrics.render();
  res.setHeader('Content-Type', metrics.contentType);
  res.end(text);
}

/** Answers a WebSocket upgrade with an error Status instead of upgrading. */
function refuseUpgrade(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.status);
  socket.end(`HTTP/1.1 ${err.code} ${STATUS_CODES[err.code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** ok, or each failed check on a line of its own as kube-apiserver lists them. */
function healthz(res: ServerResponse, endpoint: string, failed: { check: string; problem: string }[]): void {
  res.statusCode = failed.length === 0 ? 200 : 500;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(failed.length === 0 ? 'ok' : `${failed.map((f) => `[-]${f.check} failed: ${f.problem}\n`).join('')}${endpoint} check failed`);
}

export function listenOn(api: ApiServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    api.http.once('error', reject);
    api.http.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      api.http.off('error', reject);
      resolve();
    });
  });
}

/**
 * Where a server listens: its own port, or a port handed over (a replay's, for its fork), which gets
 * the server's connections only once open() says it is ready: a client held through the switch is
 * answered by a ready server, not with 503.
 */
export async function listenOrTakeOver(api: ApiServer, port: number, host: string, handover?: HandoverPort): Promise<{ port: number; open(): void; close(): Promise<void> }> {
  if (handover) return { port: handover.port, open: () => handover.serve(api.http), close: () => handover.close() };
  await listenOn(api, port, host);
  // The API server's own close stops its listener.
  return { port: (api.http.address() as AddressInfo).port, open: () => undefined, close: async () => undefined };
}

/** Stops accepting and waits for requests in flight, at most timeoutMs before cutting their connections. */
export async function closeApiServer(api: ApiServer, logger: Logger, timeoutMs: number): Promise<void> {
  const cut = setTimeout(() => {
    // Safe: a write already appended is still made durable by log.close() later; the ones whose
    // connections are cut were waiting for their bodies and have appended nothing.
    logger.warn('requests still in flight at the shutdown timeout: closing their connections', { timeoutMs });
    api.http.closeAllConnections();
  }, timeoutMs);
  try {
    await api.close();
  } finally {
    clearTimeout(cut);
  }
}
