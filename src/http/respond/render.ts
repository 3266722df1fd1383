import { apiVersionOf } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import type { StoredObject } from '../../registry/reads.js';
import type { Request } from '../context.js';
import { includeObject } from '../codec/query.js';
import { send } from './respond.js';
import type { ResourceRoute } from '../router.js';
import { tableFor, wantsTable } from './table.js';

export const apiVersion = (route: ResourceRoute) => apiVersionOf(route.kind, route.version);

/** The object as served at the route's version; the stored encoding when the versions agree. */
function objectOut(route: ResourceRoute, obj: KubeObject): KubeObject {
  const v = apiVersion(route);
  return obj.apiVersion === v ? obj : { ...obj, apiVersion: v };
}

/**
 * A stored object as the answer: its shared encoding when it is stored at the route's version. An
 * object replayed from the log and not read since is encoded from its bytes and never decoded (a
 * first GET of each of 100k objects built and kept 100k trees).
 */
export function sendStored(r: Request, code: number, s: StoredObject): void {
  if (!wantsTable(r.req.headers.accept)) {
    const json = r.server.objects.sharedJson(s, apiVersion(r.route));
    if (json) return send(r.res, code, undefined, r.out, json);
  }
  // A Table, or another version: made from the object, not from its stored encoding.
  sendObject(r, code, s.obj);
}

/** One object as the answer: a Table when asked for one, else the object at the route's version. */
export function sendObject(r: Request, code: number, obj: KubeObject, json?: Buffer): void {
  const table = wantsTable(r.req.headers.accept);
  if (table) return send(r.res, code, tableFor(r.route.kind, [obj], { version: table, includeObject: includeObject(r.url.searchParams) }), r.out);
  const out = objectOut(r.route, obj);
  send(r.res, code, out, r.out, out === obj ? json : undefined);
}
