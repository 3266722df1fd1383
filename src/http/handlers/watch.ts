import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ServerOptions, WebSocket, WebSocketServer } from 'ws';
import type { KubeObject } from '../../api/types.js';
import type { OpenWatch } from '../../registry/watch.js';
import type { Request, Server } from '../context.js';
import * as Q from '../codec/query.js';
import { apiVersion } from '../respond/render.js';
import { toStatus } from '../respond/respond.js';
import { checkRouteNames, readingEveryNamespace, type ResourceRoute } from '../router.js';
import { selectorsOf } from './read.js';
import * as E from '../respond/status.js';
import { tableFor, wantsTable } from '../respond/table.js';
import { faultySink } from './watch-faults.js';
import type { WatchSink } from './watch-sinks.js';
import { DEFAULT_SINK_LIMITS, type SinkLimits, type WatchSpec } from './watch-stream.js';

/**
 * Kubernetes ends a watch without timeoutSeconds after a random time in [minRequestTimeout,
 * 2·minRequestTimeout) (30–60 min) so that re-watches spread out instead of arriving together.
 * timeoutSeconds=0 means "not set" there too.
 */
export const MIN_REQUEST_TIMEOUT_SECONDS = 1800;
export const watchTimeoutMs = (timeoutSeconds: number | undefined, random: () => number = Math.random): number =>
  (timeoutSeconds ? timeoutSeconds : MIN_REQUEST_TIMEOUT_SECONDS * (1 + random())) * 1000;

/** A watch as the request asks for it: the registry's prepared stream, and how this watcher encodes. */
function watchSpec(req: IncomingMessage, url: URL, route: ResourceRoute, server: Server): { open: OpenWatch; spec: WatchSpec } {
  const params = url.searchParams;
  const opts = Q.listOptions(params, { watch: true });
  const kind = route.kind;
  const open = server.objects.watch(kind, route.namespace, {
    ...(route.name !== undefined ? { name: route.name } : {}),
    selectors: selectorsOf(params),
    resourceVersion: Q.parseResourceVersion(opts.resourceVersion),
    ...(opts.resourceVersionMatch ? { resourceVersionMatch: opts.resourceVersionMatch } : {}),
    sendInitialEvents: opts.sendInitialEvents,
    ...(opts.allowWatchBookmarks ? { bookmarkIntervalMs: server.bookmarkIntervalMs } : {}),
    timeoutMs: watchTimeoutMs(opts.timeoutSeconds),
  });
  const table = wantsTable(req.headers.accept);
  let render: WatchSpec['render'];
  if (table) {
    const includeObject = Q.includeObject(params);
    // Column definitions go with the first event only, as Kubernetes' watch encoder sends them.
    let headers = true;
    render = (o: KubeObject) => {
      const t = tableFor(kind, [o], { version: table, includeObject });
      if (!headers) t.columnDefinitions = [];
      headers = false;
      return t;
    };
  }
  return { open, spec: { kind, apiVersion: apiVersion(route), ...(render ? { render } : {}) } };
}

const limitsOf = (server: Server): SinkLimits => ({ ...DEFAULT_SINK_LIMITS, ...server.watchLimits });

/** A watch over a chunked HTTP response, one JSON event per line. */
export function handleWatch(r: Request): void {
  const { open, spec } = watchSpec(r.req, r.url, r.route, r.server);
  const { res } = r;
  res.statusCode = 200;
  // Watches are JSON whatever else was asked (Tables are JSON too); Accept */* (client-node) gets JSON.
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Cache-Control', 'no-cache, private');
  res.flushHeaders();
  const limits = limitsOf(r.server);
  const sink = r.server.streams.httpSink(res, limits.graceMs);
  const { fault, server } = r;
  const faulty =
    fault?.inject.watch && server.faults
      ? faultySink(sink, fault, server.faults, {
          destroy: () => res.destroy(),
          startVersion: r.url.searchParams.get('resourceVersion') ?? '',
          head: () => server.objects.logReader().appliedSeq,
          annotate: r.annotate ?? (() => undefined),
        })
      : sink;
  startWatch(r.server, r.route, open, spec, faulty, limits);
}

/** Runs a watch, its events counted for /metrics, and holds it among the open watches until it ends (even if its connection still drains) or closes. */
function startWatch(server: Server, route: ResourceRoute, openWatch: OpenWatch, spec: WatchSpec, sink: WatchSink, limits: SinkLimits): void {
  let open = true;
  // The run may end the watch before it returns (a 410 found at once), so stop may not be set yet.
  let stop: ((why?: unknown) => void) | undefined;
  const release = () => {
    if (!open) return;
    open = false;
    if (stop) server.watches.delete(stop);
  };
  const counted: WatchSink = {
    ...sink,
    end() {
      release();
      sink.end();
    },
  };
  sink.onClose(release);
  stop = server.streams.run(openWatch, spec, counted, limits, server.metrics.watchEvents.of(route.kind.group, route.version, route.kind.kind));
  if (open) {
    server.watches.add(stop);
  }
}

/**
 * The WebSocket subprotocol a watch answers with, as Kubernetes' handshake (golang.org/x/net's
 * websocket server) picks it: none offered → none; one → that one, whatever it is (JSON is sent
 * either way); more than one → the handshake fails with 400. A bearer token carried as a protocol
 * (`base64url.bearer.authorization.k8s.io.<token>`) is taken out by authentication before that,
 * and is never echoed back.
 */
export function watchSubprotocol(header: string | undefined): { ok: true; protocol?: string } | { ok: false } {
  const offered = (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '' && !p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (offered.length > 1) return { ok: false };
  return offered.length === 1 ? { ok: true, protocol: offered[0] } : { ok: true };
}

const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** Options for the server's WebSocketServer: the protocol choice above (checked before the upgrade). */
export const watchSocketServerOptions: ServerOptions = {
  noServer: true,
  handleProtocols: (_protocols, req) => {
    const p = watchSubprotocol(req.headers['sec-websocket-protocol']);
    return p.ok && p.protocol !== undefined ? p.protocol : false;
  },
};

/**
 * A watch over a WebSocket: the same events, one per text message. Everything that would fail the
 * request over plain HTTP (bad options, selectors, Table options) fails it here too, as an HTTP
 * answer with a Status instead of the upgrade, as Kubernetes does; failures after the stream has
 * started (410 Expired) are ERROR events, as over HTTP.
 */
export function upgradeWatch(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, request: { url: URL; route: ResourceRoute; server: Server }): void {
  let watch: ReturnType<typeof watchSpec>;
  const r = { ...request, route: readingEveryNamespace(request.route, req.method ?? 'GET') };
  try {
    if (req.method !== 'GET') throw E.methodNotAllowed(req.method ?? '');
    checkRouteNames(r.route);
    // x/net's default handshake requires an Origin that parses, and refuses one that does not with
    // 403. A missing Origin it also refuses; we accept it so that non-browser clients can watch.
    const origin = req.headers.origin;
    if (origin !== undefined && !URL.canParse(origin)) return refuse(socket, 403, 'Forbidden');
    if (!watchSubprotocol(req.headers['sec-websocket-protocol']).ok) return refuse(socket, 400, 'Bad Request');
    if (!r.route.watchPrefix && (r.route.name !== undefined || !Q.flag(r.url.searchParams, 'watch'))) {
      // Only watches upgrade; a plain GET has no stream to carry.
      throw E.badRequest('only watch requests can be upgraded to a WebSocket');
    }
    watch = watchSpec(req, r.url, r.route, r.server);
  } catch (err) {
    const status = toStatus(err);
    const body = JSON.stringify(status);
    socket.end(`HTTP/1.1 ${status.code} ${STATUS_CODES[status.code] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    // The client sends nothing on a watch; what it sends is ignored, as Kubernetes ignores it.
    const limits = limitsOf(r.server);
    startWatch(r.server, r.route, watch.open, watch.spec, r.server.streams.webSocketSink(ws, socket, limits.graceMs), limits);
  });
}

function refuse(socket: Duplex, code: number, phrase: string): void {
  socket.end(`HTTP/1.1 ${code} ${phrase}\r\nConnection: close\r\n\r\n`);
}
