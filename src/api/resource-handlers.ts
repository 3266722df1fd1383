import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { apiVersionOf, type KindStrategy } from '../resources/strategy.js';
import type { KubeObject } from '../resources/types.js';
import { LogError } from '../log/log.js';
import { collectionOf, suffixOf } from '../store/keys.js';
import { compileFieldSelector, parseFieldSelector } from '../store/field-selector.js';
import { matchesLabels, parseLabelSelector, SelectorError } from '../store/label-selector.js';
import { getAt, listObjects, type ListResult } from '../store/list.js';
import { encodeStored } from '../store/view.js';
import type { Request, Server } from './context.js';
import { decodeObject } from './decode-object.js';
import { addWarnings, send, type Output } from './respond.js';
import type { ResourceRoute } from './router.js';
import * as E from './status.js';
import { httpSink, runWatch, type WatchSink, type WatchSpec } from './watch.js';
import { readBody, decodeBody, OBJECT_MEDIA_TYPES } from './body.js';
import { negotiateResponse } from './media.js';
import * as Q from './query.js';
import { tableFor, wantsTable } from './table.js';

/** Picks the response rendering from Accept and pretty; a Table is decided per verb. */
export function outputFor(req: IncomingMessage, url: URL): Output {
  return { format: negotiateResponse(req.headers.accept), pretty: Q.pretty(url.searchParams, req.headers['user-agent']) };
}

const qualified = (kind: KindStrategy, name?: string) => ({ group: kind.group, resource: kind.plural, kind: kind.kind, ...(name !== undefined ? { name } : {}) });

/** Dispatches one resource request by method and path shape. Returns the verb for metrics. */
export async function handleResource(r: Request): Promise<string> {
  const { route, req } = r;
  const method = req.method ?? 'GET';
  const params = r.url.searchParams;
  if (route.watchPrefix || (method === 'GET' && route.name === undefined && Q.flag(params, 'watch'))) {
    if (method !== 'GET') throw E.methodNotAllowed(method);
    watchHttp(r);
    return 'WATCH';
  }
  if (route.namespace === undefined && route.kind.namespaced && method !== 'GET') {
    // Writes to a namespaced kind need the namespace in the path (the all-namespaces path is read-only).
    throw E.methodNotAllowed(method);
  }
  if (route.name === undefined) {
    switch (method) {
      case 'GET':
        await list(r);
        return 'LIST';
      case 'POST':
        await create(r);
        return 'POST';
      case 'DELETE':
        await deleteCollection(r);
        return 'DELETECOLLECTION';
      default:
        throw E.methodNotAllowed(method);
    }
  }
  switch (method) {
    case 'GET':
      await get(r);
      return 'GET';
    case 'PUT':
      await replace(r);
      return 'PUT';
    case 'DELETE':
      await remove(r);
      return 'DELETE';
    case 'PATCH':
      await patch(r);
      return 'PATCH';
    default:
      throw E.methodNotAllowed(method);
  }
}

const apiVersion = (route: ResourceRoute) => apiVersionOf(route.kind, route.version);

/** The object as served at the route's version; the stored encoding when the versions agree. */
function objectOut(route: ResourceRoute, obj: KubeObject): KubeObject {
  const v = apiVersion(route);
  return obj.apiVersion === v ? obj : { ...obj, apiVersion: v };
}

function sendObject(r: Request, code: number, obj: KubeObject, json?: string): void {
  const table = wantsTable(r.req.headers.accept);
  if (table) return send(r.res, code, tableFor(r.route.kind, [obj], { version: table, includeObject: Q.includeObject(r.url.searchParams) }), r.out);
  const out = objectOut(r.route, obj);
  send(r.res, code, out, r.out, out === obj ? json : undefined);
}

async function get(r: Request): Promise<void> {
  const { route } = r;
  const opts = Q.getOptions(r.url.searchParams);
  if (opts.resourceVersion && opts.resourceVersion !== '0') return getAtVersion(r, opts.resourceVersion, opts.resourceVersionMatch === 'Exact');
  const s = r.server.objects.get(route.kind, route.namespace, route.name!);
  sendObject(r, 200, s.obj, encodeStored(s));
}

/** Exact: the object as it was at rv (time travel). Otherwise rv is a floor: wait until the view has it. */
async function getAtVersion(r: Request, rv: string, exact: boolean): Promise<void> {
  const seq = Q.parseResourceVersion(rv);
  const { objects } = r.server;
  const key = objects.key(r.route.kind, r.route.namespace, r.route.name!);
  if (!(await objects.store.waitFor(seq, 3000))) throw E.tooLargeResourceVersion(seq, objects.store.appliedSeq);
  try {
    const s = !exact || seq >= objects.store.appliedSeq ? objects.store.get(key) : await getAt(objects.store, key, seq);
    if (!s) throw E.notFound(qualified(r.route.kind, r.route.name));
    sendObject(r, 200, s.obj, encodeStored(s));
  } catch (err) {
    throw translateRead(err, seq);
  }
}

function translateRead(err: unknown, seq: number): unknown {
  if (err instanceof LogError && err.code === 'COMPACTED') return E.gone(`too old resource version: ${seq}`);
  return err;
}

/** Selector of a list or watch: labels, fields (per kind), compiled once for the request. */
function selectorOf(kind: KindStrategy, params: URLSearchParams): ((o: KubeObject) => boolean) | undefined {
  const labelSel = params.get('labelSelector') ?? '';
  const fieldSel = params.get('fieldSelector') ?? '';
  if (!labelSel && !fieldSel) return undefined;
  try {
    const labels = parseLabelSelector(labelSel);
    const fields = compileFieldSelector(parseFieldSelector(fieldSel), fieldAccessors(kind));
    return (o) => matchesLabels(labels, o.metadata.labels) && fields(o);
  } catch (err) {
    if (err instanceof SelectorError) throw E.badRequest(err.message);
    throw err;
  }
}

function fieldAccessors(kind: KindStrategy): Record<string, (o: KubeObject) => string> {
  return {
    'metadata.name': (o) => o.metadata.name ?? '',
    ...(kind.namespaced ? { 'metadata.namespace': (o: KubeObject) => o.metadata.namespace ?? '' } : {}),
    ...kind.fieldSelectors,
  };
}

async function list(r: Request): Promise<void> {
  const { route, server } = r;
  const params = r.url.searchParams;
  const opts = Q.listOptions(params);
  const matches = selectorOf(route.kind, params);
  const collection = collectionOf(route.kind);
  const prefix = route.kind.namespaced && route.namespace !== undefined ? suffixOf(route.namespace, '') : '';
  const store = server.objects.store;
  const query = `${collection}|${prefix}|${params.get('labelSelector') ?? ''}|${params.get('fieldSelector') ?? ''}`;
  let atSeq: number | undefined;
  let after: string | undefined;
  if (opts.continue) {
    const p = server.tokens.decode(opts.continue, query);
    if (!p) throw E.badRequest('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    atSeq = p.seq;
    after = p.after;
    if (atSeq < store.log.firstSeq - 1) {
      // Past the horizon: a fresh token continues after the same key from the latest snapshot.
      const fresh = server.tokens.encode({ seq: store.appliedSeq, after }, query);
      throw E.resourceExpired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.', fresh);
    }
  } else if (opts.resourceVersion !== undefined && opts.resourceVersion !== '0') {
    // NotOlderThan (and the legacy unset match) is a floor; Exact reads the past through the key index.
    const seq = Q.parseResourceVersion(opts.resourceVersion);
    if (!(await store.waitFor(seq, 3000))) throw E.tooLargeResourceVersion(seq, store.appliedSeq);
    if (opts.resourceVersionMatch === 'Exact') atSeq = seq;
  }
  let result: ListResult;
  try {
    result = await listObjects(store, { collection, prefix, ...(matches ? { matches } : {}), ...(opts.limit ? { limit: opts.limit } : {}), ...(after !== undefined ? { after } : {}), ...(atSeq !== undefined ? { atSeq } : {}) });
  } catch (err) {
    throw translateRead(err, atSeq ?? 0);
  }
  const meta: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(result.seq) };
  if (result.next !== undefined) {
    meta.continue = server.tokens.encode({ seq: result.seq, after: result.next }, query);
    if (result.remaining !== undefined) meta.remainingItemCount = result.remaining;
  }
  const table = wantsTable(r.req.headers.accept);
  if (table) {
    send(r.res, 200, tableFor(route.kind, result.items.map((s) => s.obj), { version: table, includeObject: Q.includeObject(params), listMeta: meta }), r.out);
    return;
  }
  const v = apiVersion(route);
  const head = `{"kind":${JSON.stringify(route.kind.listKind)},"apiVersion":${JSON.stringify(v)},"metadata":${JSON.stringify(meta)},"items":[`;
  const json = head + result.items.map((s) => (s.obj.apiVersion === v ? encodeStored(s) : JSON.stringify({ ...s.obj, apiVersion: v }))).join(',') + ']}';
  send(r.res, 200, undefined, r.out, json);
}

async function create(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = Q.createOptions(r.url.searchParams);
  const { obj, warnings } = await decodeObject(r, opts.fieldValidation);
  if (obj.metadata.namespace && route.namespace !== undefined && obj.metadata.namespace !== route.namespace) {
    throw E.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const created = await server.objects.create(route.kind, route.namespace, obj, { dryRun: opts.dryRun });
  addWarnings(r.res, warnings);
  sendObject(r, 201, created);
}

async function replace(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = Q.updateOptions(r.url.searchParams);
  const { obj, warnings } = await decodeObject(r, opts.fieldValidation);
  if (obj.metadata.name !== undefined && obj.metadata.name !== route.name) {
    throw E.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${route.name})`);
  }
  if (obj.metadata.namespace && route.namespace !== undefined && obj.metadata.namespace !== route.namespace) {
    throw E.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  obj.metadata.name = route.name;
  const { obj: out, created } = await server.objects.update(route.kind, route.namespace, route.name!, obj, {
    dryRun: opts.dryRun,
    ...(route.subresource ? { subresource: route.subresource } : {}),
    allowCreate: route.kind.allowCreateOnUpdate === true,
  });
  addWarnings(r.res, warnings);
  sendObject(r, created ? 201 : 200, out);
}

async function remove(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = Q.deleteOptionsFrom(r.url.searchParams, await optionalBody(r));
  const { deleted, obj } = await server.objects.delete(route.kind, route.namespace, route.name!, opts);
  if (!deleted) return sendObject(r, 202, obj);
  send(r.res, 200, E.success({ name: route.name!, group: route.kind.group, kind: route.kind.plural, ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}) }), r.out);
}

async function deleteCollection(r: Request): Promise<void> {
  const { route, server } = r;
  const { delete: opts } = Q.deleteCollectionOptions(r.url.searchParams, await optionalBody(r));
  const matches = selectorOf(route.kind, r.url.searchParams);
  const targets = [...server.objects.list(route.kind, route.namespace)].filter((s) => !matches || matches(s.obj));
  for (const s of targets) {
    await server.objects.delete(route.kind, s.obj.metadata.namespace, s.obj.metadata.name ?? '', opts).catch((err: unknown) => {
      // Gone meanwhile is what the caller wanted anyway.
      if (!(err instanceof E.ApiError && err.code === 404)) throw err;
    });
  }
  send(r.res, 200, E.success(), r.out);
}

/** A DELETE may carry DeleteOptions in its body; most clients send none. */
async function optionalBody(r: Request): Promise<unknown> {
  return decodeBody(await readBody(r.req), r.req.headers['content-type'], { accept: OBJECT_MEDIA_TYPES, required: false })?.value;
}

/**
 * Kubernetes ends a watch without timeoutSeconds after a random time in [minRequestTimeout,
 * 2·minRequestTimeout) (30–60 min) so that re-watches spread out instead of arriving together.
 */
const MIN_REQUEST_TIMEOUT_SECONDS = 1800;
const defaultWatchTimeoutSeconds = (): number => MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random());

async function patch(_r: Request): Promise<void> {
  throw E.unsupportedMediaType(_r.req.headers['content-type'] ?? '');
}

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

function watchHttp(r: Request): void {
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

export { qualified };
