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
import type { Authorizer } from '../auth/authorizer.js';
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

export interface ApiServer {
  http: HttpServer;
  context: Server;
  /** After the store is rebuilt (and the controllers started, by serve.ts): /readyz says ok. */
  start(): Promise<void>;
  /** Stops accepting, ends watches, waits for in-flight requests. */
  close(): Promise<void>;
}

/**
 * The HTTP side of orchd: authentication, authorization, routing to the handlers, readiness and a
 * graceful close. Long: the request and upgrade handlers share the server's state (readiness,
 * requests in flight) as one closure.
 */
export function createApiServer(opts: ApiServerOptions): ApiServer {
  // Asked per request: a CRD's kind comes and goes while the server runs (the index follows the list).
  const lookup = (g: string, v: string, p: string) => kindIndex(opts.kinds).resource(g, v, p);
  const authorizer: NonNullable<ApiServerOptions['authorizer']> = opts.authorizer ?? alwaysAllow;
  const { objects } = opts;
  const context: Server = {
    objects,
    kinds: opts.kinds,
    metrics: opts.metrics,
    logger: opts.logger,
    watches: new OpenWatches(),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    ...(opts.watchLimits ? { watchLimits: opts.watchLimits } : {}),
  };
  const faults = opts.faults ? (context.faults = new Faults({ ...opts.faults, head: () => objects.logReader().appliedSeq })) : undefined;
  let ready = false;
  /** Why /readyz fails and resources are refused while not ready. */
  let notReady = 'the log is being replayed';
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const limiter = new InflightLimiter(opts.inflight ?? DEFAULT_INFLIGHT_LIMITS);
  const authenticator: Authenticator = opts.authenticator ?? new RequestAuthenticator(undefined);
  opts.metrics.readAtScrape(() => [...objects.samples(opts.kinds), ...(authenticator.samples?.() ?? []), ...(authorizer.samples?.() ?? []), ...limiter.samples(), ...(faults?.samples() ?? [])]);
  /** Kube's answer to failed authentication: the reason goes to the log, never to the client. */
  const unauthenticated = (req: IncomingMessage, reason: string): ApiError => {
    opts.logger.info('unable to authenticate the request', { method: req.method, path: req.url?.split('?')[0], reason });
    return unauthorized();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    inFlight++;
    const verb = req.method ?? 'GET';
    /** Set once the path names a resource: the request is then counted in /metrics. */
    let counted: RequestLabels | undefined;
    let out: Output = { format: 'json', pretty: false };
    let audit: RequestAudit | undefined;
    let release: (() => void) | undefined;
    try {
      const target = requestTarget(req.url, req.method);
      const { url } = target;
      const auth = await authenticator.authenticate(req.headers, target.path);
      if (!auth.ok) throw unauthenticated(req, auth.reason);
      // A path whose attributes cannot be read is counted by its method; the authorizer then refuses it.
      const attributes = attributesOrUndefined(req, target, auth.user);
      const r: Route | undefined = route(target.path, lookup);
      // Refusals (429, 403) are counted too, as kube-apiserver counts them; paths naming no resource are not.
      if (r?.type === 'resource' && attributes) counted = requestLabels(r, attributes, req.headers['content-type']);
      release = limiter.admit(attributes ?? { verb: verb.toLowerCase(), isResourceRequest: false }, auth.user);
      // Awaited only when the chain went over the network: a cached decision costs no extra turn.
      // /debug/log is authorized per resource it reads, as a list of it (handlers/debug-log.ts).
      if (opts.audit) audit = new RequestAudit(req, auth.user, attributes);
      const authorized = opts.authorizer && !/^\/debug\/log(\/|$)/.test(target.path) && authorize(opts.authorizer, attributes ?? requestAttributes(req, target, auth.user));
      if (authorized) await authorized;
      if (opts.authorizer) audit?.annotate(DECISION_ANNOTATION, 'allow');
      if (!r) throw pathNotFound();
      switch (r.type) {
        case 'health':
          return healthz(res, r.check, [...(r.check === 'readyz' && !ready ? [{ check: 'readyz', problem: notReady }] : []), ...(r.check === 'livez' ? [] : (opts.healthChecks?.() ?? []))]);
        case 'metrics':
          return await sendMetrics(res, opts.metrics);
        case 'discovery':
          return handleDiscovery(req, res, r, opts.kinds);
        case 'openapi':
          await handleOpenApi(req, res, url, r.path, opts.kinds);
          return;
        case 'timeline':
          // The debugging page (and its diff library) is loaded by its first visit.
          await (await import('./handlers/timeline.js')).handleTimeline(res, url, r.path, objects, opts.forks ?? []);
          return;
        case 'debugFaults':
          return await handleDebugFaults(req, res, r.path, faults);
        case 'debugLog':
          await handleDebugLog(res, url, r.path, objects.logReader(), opts.kinds, (a) => (opts.authorizer ? authorize(opts.authorizer, { ...a, user: auth.user }) : undefined));
          return;
        case 'resource': {
          out = outputFor(req, url);
          if (!ready) throw serviceUnavailable(`the server is not ready: ${notReady}`);
          const audited = (audit ??= new RequestAudit(req, auth.user, attributes));
          if (r.kind.deprecationWarning) addWarnings(res, [r.kind.deprecationWarning]);
          // What the log keeps of each entry this request writes: who, how, with which field manager (a read writes nothing).
          const reads = req.method === 'GET' || req.method === 'HEAD';
          const write = reads
            ? undefined
            : {
                verb: attributes?.verb ?? verb.toLowerCase(),
                ...(r.subresource ? { subresource: r.subresource } : {}),
                manager: url.searchParams.get('fieldManager') ?? managerFromUserAgent(req.headers['user-agent']),
              };
          const admission = { user: auth.user, warn: (w: readonly string[]) => addWarnings(res, w), annotate: audited.annotate, ...(write ? { write } : {}) };
          const fault = faults?.active && attributes ? await faultsBefore(faults, attributes, req, res, url, r, audited.annotate) : undefined;
          await asRequest(admission, () =>
            handleResource({ req, res, url, route: r, out, server: context, user: auth.user, requestObject: audited.requestObject, annotate: audited.annotate, ...(fault ? { fault } : {}) }),
          );
          return;
        }
      }
    } catch (err) {
      const code = sendError(res, err, out);
      audit?.failed(toStatus(err));
      if (code === 403 && opts.authorizer) audit?.annotate(DECISION_ANNOTATION, 'forbid');
      // 503 is the not-ready refusal (replay, shutdown): expected, and one line per request would flood the log.
      if (code >= 500 && code !== 503) opts.logger.error('request failed', { method: req.method, url: req.url, code, error: err instanceof Error ? err.stack : String(err) });
    } finally {
      release?.();
      inFlight--;
      audit?.write(opts.logger, res.statusCode, opts.audit);
      // A watch is counted when it ends, as kube-apiserver counts long-running requests.
      if (counted?.verb === 'WATCH') res.once('close', () => opts.metrics.request(counted!, res.statusCode, (performance.now() - started) / 1000));
      else if (counted) opts.metrics.request(counted, res.statusCode, (performance.now() - started) / 1000);
      if (inFlight === 0) drained?.();
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    receiving(req, res);
    void traceRequest(req, res, () => handle(req, res));
  };
  const serverOptions = { keepAliveTimeout: 65_000, ...arrivalBounds(opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, opts.headersTimeoutMs) };
  const http: HttpServer = opts.tls ? createHttpsServer({ ...opts.tls, ...serverOptions }, listener) : createServer(serverOptions, listener);
  // Slow clients are cut; a request Node cannot parse is answered with a Status.
  const receiving = cutSlowClients(http, answerClientError);
  // ws is loaded by the first WebSocket watch: most clients (and embedded test servers) never make one.
  let wss: WebSocketServer | undefined;
  const sockets = async () => (wss ??= new (await import('ws')).WebSocketServer(watchSocketServerOptions));
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void upgrade(req, socket, head).catch((err: unknown) => refuseUpgrade(socket, toApiError(err))));
  http.on('connect', connectAsRequest(listener));
  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const target = requestTarget(req.url, req.method);
    const auth = await authenticator.authenticate(req.headers, target.path).catch((err: unknown) => ({ ok: false as const, reason: String(err) }));
    if (!auth.ok) return refuseUpgrade(socket, unauthenticated(req, auth.reason));
    try {
      if (opts.authorizer) await authorize(opts.authorizer, requestAttributes(req, target, auth.user));
    } catch (err) {
      return refuseUpgrade(socket, toApiError(err));
    }
    const r = route(target.path, lookup);
    if (!ready) return refuseUpgrade(socket, serviceUnavailable(`the server is not ready: ${notReady}`));
    if (!r || r.type !== 'resource') return refuseUpgrade(socket, pathNotFound());
    upgradeWatch(await sockets(), req, socket, head, { url: target.url, route: r, server: context });
  };

  return {
    http,
    context,
    async start() {
      ready = true;
      opts.logger.info('serving', { since: rfc3339(new Date()) });
    },
    async close() {
      ready = false;
      notReady = 'the server is shutting down';
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      for (const end of context.watches) end();
      for (const ws of wss?.clients ?? []) ws.close(1001, 'server shutting down');
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      http.closeIdleConnections();
      await closed;
      await opts.audit?.close();
      await faults?.close();
    },
  };
}

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
