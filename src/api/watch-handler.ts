import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import type { KubeObject } from '../resources/types.js';
import { collectionOf, suffixOf } from '../store/keys.js';
import type { Request, Server } from './context.js';
import * as Q from './query.js';
import { apiVersion } from './render.js';
import type { ResourceRoute } from './router.js';
import { selectorOf } from './selectors.js';
import * as E from './status.js';
import { tableFor, wantsTable } from './table.js';
import { httpSink, runWatch, type WatchSink, type WatchSpec } from './watch.js';

/**
 * Kubernetes ends a watch without timeoutSeconds after a random time in [minRequestTimeout,
 * 2·minRequestTimeout) (30–60 min) so that re-watches spread out instead of arriving together.
 */
const MIN_REQUEST_TIMEOUT_SECONDS = 1800;
const defaultWatchTimeoutSeconds = (): number => MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random());

function watchSpec(req: IncomingMessage, url: URL, route: ResourceRoute, server: Server): WatchSpec {
  const params = url.searchParams;
  const opts = Q.listOptions(params, { watch: true });
  const kind = route.kind;
  let matches = selectorOf(kind, params);
  if (route.name !== undefined) {
    // The deprecated /watch/<plural>/<name> path watches one object: a name field selector.
    const name = route.name;
    const rest = matches;
    matches = (o) => o.metadata.name === name && (!rest || rest(o));
  }
  const collection = collectionOf(kind);
  const prefix = kind.namespaced && route.namespace !== undefined ? suffixOf(route.namespace, '') : '';
  const table = wantsTable(req.headers.accept);
  const after = opts.resourceVersion && opts.resourceVersion !== '0' && !opts.sendInitialEvents ? Q.parseResourceVersion(opts.resourceVersion) : undefined;
  return {
    kind,
    apiVersion: apiVersion(route),
    keyPrefix: `${collection}/${prefix}`,
    ...(after !== undefined ? { after } : {}),
    initialEventsEnd: opts.sendInitialEvents,
    bookmarks: opts.allowWatchBookmarks,
    bookmarkIntervalMs: server.bookmarkIntervalMs,
    timeoutMs: (opts.timeoutSeconds ?? defaultWatchTimeoutSeconds()) * 1000,
    ...(matches ? { matches } : {}),
    ...(table ? { render: (o: KubeObject) => tableFor(kind, [o], { version: table, includeObject: Q.includeObject(params) }) } : {}),
    current: () => server.objects.store.list(collection, prefix),
  };
}

/** A watch over a chunked HTTP response, one JSON event per line. */
export function handleWatch(r: Request): void {
  const spec = watchSpec(r.req, r.url, r.route, r.server);
  const { res } = r;
  res.statusCode = 200;
  res.setHeader('Content-Type', r.out.format === 'json' ? 'application/json' : 'application/json');
  res.setHeader('Cache-Control', 'no-cache, private');
  res.flushHeaders();
  startWatch(r.server, r.route, spec, httpSink(res));
}

function startWatch(server: Server, route: ResourceRoute, spec: WatchSpec, sink: WatchSink): void {
  server.metrics.watcherDelta(route.kind.plural, 1);
  const stop = runWatch(server.objects.store, spec, sink);
  server.watches.add(stop);
  sink.onClose(() => {
    server.watches.delete(stop);
    server.metrics.watcherDelta(route.kind.plural, -1);
  });
}

/** A watch over a WebSocket: the same events, one per message. */
export function handleResourceUpgrade(ws: WebSocket, r: { req: IncomingMessage; url: URL; route: ResourceRoute; server: Server }): void {
  let spec: WatchSpec;
  try {
    spec = watchSpec(r.req, r.url, r.route, r.server);
  } catch (err) {
    ws.send(JSON.stringify({ type: 'ERROR', object: err instanceof E.ApiError ? err.status : E.internalError(String(err)).status }));
    ws.close(1000);
    return;
  }
  const maxBuffered = 16 * 1024 * 1024;
  startWatch(r.server, r.route, spec, {
    send(line) {
      ws.send(line.subarray(0, line.length - 1), { binary: false });
      return ws.bufferedAmount <= maxBuffered;
    },
    end() {
      ws.close(1000);
    },
    onClose(fn) {
      ws.on('close', fn);
    },
  });
}

