import type { IncomingMessage } from 'node:http';
import { decodeBody, OBJECT_MEDIA_TYPES, readBody } from '../codec/body.js';
import type { Request } from '../context.js';
import { decodeObject } from '../codec/decode-object.js';
import { negotiateResponse } from '../codec/media.js';
import { handlePatch } from './patch.js';
import { fieldManagerOf } from '../codec/field-manager.js';
import * as Q from '../codec/query.js';
import { deleteCollectionOptions, deleteOptionsFrom } from '../codec/delete-options.js';
import { handleGet, handleList, listPage } from './read.js';
import { sendObject } from '../respond/render.js';
import { addWarnings, send, type Output } from '../respond/respond.js';
import * as E from '../respond/status.js';
import { isRegistryError } from '../../registry/errors.js';
import { handleWatch } from './watch.js';
import { handleScale } from './scale.js';
import { checkRouteNames, readingEveryNamespace } from '../router.js';
import { stageLap, stageStart } from '../../observability/stage-timing.js';

/** Picks the response rendering from Accept and pretty; a Table is decided per verb. */
export function outputFor(req: IncomingMessage, url: URL): Output {
  return { format: negotiateResponse(req.headers.accept), pretty: Q.pretty(url.searchParams, req.headers['user-agent']) };
}

/** Dispatches one resource request by method and path shape. Returns the verb for metrics. */
export async function handleResource(request: Request): Promise<string> {
  const method = request.req.method ?? 'GET';
  const r = { ...request, route: readingEveryNamespace(request.route, method) };
  const { route } = r;
  checkRouteNames(route);
  if (route.readOnly && method !== 'GET') throw E.methodNotAllowed(method);
  const params = r.url.searchParams;
  if (route.watchPrefix || (method === 'GET' && route.name === undefined && Q.flag(params, 'watch'))) {
    if (method !== 'GET') throw E.methodNotAllowed(method);
    handleWatch(r);
    return 'WATCH';
  }
  if (route.namespace === undefined && route.kind.namespaced && method !== 'GET') {
    // Writes to a namespaced kind need the namespace in the path (the all-namespaces path is read-only).
    throw E.methodNotAllowed(method);
  }
  if (route.name === undefined) {
    switch (method) {
      case 'GET':
        await handleList(r);
        return 'LIST';
      case 'POST':
        await create(r);
        return 'POST';
      case 'DELETE':
        if (route.kind.deleteCollection === false) throw E.methodNotAllowed(method);
        await deleteCollection(r);
        return 'DELETECOLLECTION';
      default:
        throw E.methodNotAllowed(method);
    }
  }
  if (route.subresource === 'scale') return handleScale(r);
  // A Namespace's finalize is written only, as kube-apiserver serves it (no get, patch or delete).
  if (route.subresource === 'finalize' && method !== 'PUT') throw E.methodNotAllowed(method);
  switch (method) {
    case 'GET':
      await handleGet(r);
      return 'GET';
    case 'PUT':
      await replace(r);
      return 'PUT';
    case 'DELETE':
      await remove(r);
      return 'DELETE';
    case 'PATCH':
      await handlePatch(r);
      return 'PATCH';
    default:
      throw E.methodNotAllowed(method);
  }
}

async function create(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = Q.createOptions(r.url.searchParams);
  const { obj, warnings } = await decodeObject(r, opts.fieldValidation);
  r.requestObject?.(obj);
  if (obj.metadata.namespace && route.namespace !== undefined && obj.metadata.namespace !== route.namespace) {
    throw E.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const created = await server.objects.createStored(route.kind, route.namespace, obj, { dryRun: opts.dryRun, fieldManager: fieldManagerOf(r, opts.fieldManager) });
  const sent = stageStart();
  addWarnings(r.res, warnings);
  sendObject(r, 201, created.obj, created.json);
  stageLap('respond', sent);
}

async function replace(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = Q.updateOptions(r.url.searchParams);
  const { obj, warnings } = await decodeObject(r, opts.fieldValidation);
  r.requestObject?.(obj);
  // A replace names its object in the body too, as kube-apiserver's checkName asks: none is refused, not taken from the URL.
  if (!obj.metadata.name) throw E.badRequest(`the name of the object (${route.name} based on URL) was undeterminable: name must be provided`);
  if (obj.metadata.name !== route.name) {
    throw E.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${route.name})`);
  }
  if (obj.metadata.namespace && route.namespace !== undefined && obj.metadata.namespace !== route.namespace) {
    throw E.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  obj.metadata.name = route.name;
  const updated = await server.objects.update(route.kind, route.namespace, route.name!, obj, {
    dryRun: opts.dryRun,
    fieldManager: fieldManagerOf(r, opts.fieldManager),
    ...(route.subresource === 'status' || route.subresource === 'finalize' ? { subresource: route.subresource } : {}),
    allowCreate: route.kind.allowCreateOnUpdate === true,
  });
  addWarnings(r.res, warnings);
  sendObject(r, updated.created ? 201 : 200, updated.obj, updated.json);
}

async function remove(r: Request): Promise<void> {
  const { route, server } = r;
  const opts = deleteOptionsFrom(r.url.searchParams, await optionalBody(r));
  const { deleted, obj } = await server.objects.delete(route.kind, route.namespace, route.name!, opts);
  // A namespace being emptied is answered 200 with it, as kube-apiserver answers namespace deletes.
  if (!deleted) return sendObject(r, route.kind.specFinalizers ? 200 : 202, obj);
  send(r.res, 200, E.success({ name: route.name!, group: route.kind.group, kind: route.kind.plural, ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}) }), r.out);
}

/**
 * Kubernetes' DeleteCollection: deletes what a list with the request's options returns, so a limit
 * or a continue token bounds it as it bounds the list (one page with a limit; from continue on).
 */
async function deleteCollection(r: Request): Promise<void> {
  const { route, server } = r;
  const { list, delete: opts } = deleteCollectionOptions(r.url.searchParams, await optionalBody(r));
  const { items: targets } = await listPage(r, list);
  for (const s of targets) {
    await server.objects.delete(route.kind, s.obj.metadata.namespace, s.obj.metadata.name ?? '', opts).catch((err: unknown) => {
      // Gone meanwhile is what the caller wanted anyway.
      if (!isRegistryError(err, 'NotFound')) throw err;
    });
  }
  send(r.res, 200, E.success(), r.out);
}

/** A DELETE may carry DeleteOptions in its body; most clients send none. */
async function optionalBody(r: Request): Promise<unknown> {
  return decodeBody(await readBody(r.req), r.req.headers['content-type'], { accept: OBJECT_MEDIA_TYPES, required: false })?.value;
}
