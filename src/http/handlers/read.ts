import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Page } from '../../registry/list-page.js';
import type { StoredObject } from '../../registry/reads.js';
import type { Request } from '../context.js';
import * as Q from '../codec/query.js';
import { apiVersion, sendStored } from '../respond/render.js';
import { send, sendParts } from '../respond/respond.js';
import { tableFor, wantsTable } from '../respond/table.js';
import { FAULT_ANNOTATION, staleVersion } from '../faults.js';

const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');
/** A list's encoding lets other work run after this many bytes (a page of 500 Events, 800 KB, never waits). */
const TURN_BYTES = 1 << 20;

/** resourceVersion as the registry takes it: unset ("" too) is a consistent read, not "0" (any). */
const requestedVersion = (rv: string | undefined): { resourceVersion?: number } => (rv === undefined || rv === '' ? {} : { resourceVersion: Q.parseResourceVersion(rv) });

/** The selectors of a list or watch, as the query gives them. */
export const selectorsOf = (params: URLSearchParams) => ({
  labelSelector: params.get('labelSelector') ?? '',
  fieldSelector: params.get('fieldSelector') ?? '',
  shardSelector: params.get('shardSelector') ?? '',
});

/**
 * GET of one object, at the version the query asks for (the registry's read: consistent, any, not
 * older than N, or Exact N).
 */
export async function handleGet(r: Request): Promise<void> {
  const { route } = r;
  const opts = staleRead(r, Q.getOptions(r.url.searchParams));
  const s = await r.server.objects.read(route.kind, route.namespace, route.name!, {
    ...requestedVersion(opts.resourceVersion),
    ...(opts.resourceVersionMatch ? { resourceVersionMatch: opts.resourceVersionMatch } : {}),
  });
  sendStored(r, 200, s);
}

/** GET of a collection: selectors, pages, and reads at a version (src/registry/list-page.ts). */
export async function handleList(r: Request): Promise<void> {
  const { items, meta } = await listPage(r, staleRead(r, Q.listOptions(r.url.searchParams)));
  await sendList(r, items, meta);
}

/**
 * The page a list with these options returns: with a limit, one page (from continue when given);
 * without one, every object (from continue on). A DELETE of a collection deletes exactly this.
 */
export function listPage(r: Request, opts: Q.ListOptions): Promise<Page> {
  const { route } = r;
  return r.server.objects.listPage(route.kind, route.namespace, {
    selectors: selectorsOf(r.url.searchParams),
    ...requestedVersion(opts.resourceVersion),
    ...(opts.resourceVersionMatch ? { resourceVersionMatch: opts.resourceVersionMatch } : {}),
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    ...(opts.continue ? { continue: opts.continue } : {}),
  });
}

/**
 * A staleRead fault: the read is answered at an older version still kept, as a lagging watch cache
 * answers resourceVersion=0 (an Exact read at that version; what it did not hold yet is not found).
 */
function staleRead<T extends { resourceVersion?: string; resourceVersionMatch?: string }>(r: Request, opts: T): T {
  const { fault, server } = r;
  if (!fault?.inject.staleRead || !server.faults) return opts;
  const at = staleVersion(fault, server.objects.logReader(), r.url.searchParams);
  if (at === undefined) return opts;
  const f = server.faults.record(fault, 'staleRead', { readAt: String(at) });
  r.annotate?.(FAULT_ANNOTATION, `${f.rule}: ${f.fault}`);
  return { ...opts, resourceVersion: String(at), resourceVersionMatch: 'Exact' };
}

/** A list's answer: a Table when asked for, else the kind's list, assembled from each object's shared encoding. */
async function sendList(r: Request, items: readonly StoredObject[], meta: Page['meta']): Promise<void> {
  const { route, server } = r;
  const table = wantsTable(r.req.headers.accept);
  if (table) {
    send(
      r.res,
      200,
      tableFor(
        route.kind,
        items.map((s) => s.obj),
        { version: table, includeObject: Q.includeObject(r.url.searchParams), listMeta: meta },
      ),
      r.out,
    );
    return;
  }
  const v = apiVersion(route);
  const head = `{"kind":${JSON.stringify(route.kind.listKind)},"apiVersion":${JSON.stringify(v)},"metadata":${JSON.stringify(meta)},"items":[`;
  // The page is assembled from each object's cached bytes: no string of the whole page is built.
  const parts: Buffer[] = [Buffer.from(head)];
  let sinceTurn = 0;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(COMMA);
    const json = server.objects.json(items[i], v);
    const bytes = typeof json === 'string' ? Buffer.from(json) : json;
    parts.push(bytes);
    // Objects not encoded yet (every one after a restart) cost ~19 µs each: an unpaged list of 1M
    // held the event loop, watches and probes included, for 19 s (bench/RESULTS.md 64). The loop
    // turns every megabyte; the items are one moment already, so what is written meanwhile is not seen.
    if ((sinceTurn += bytes.length) >= TURN_BYTES) {
      sinceTurn = 0;
      await nextTurn();
      if (r.res.destroyed) return;
    }
  }
  parts.push(LIST_END);
  await sendParts(r.res, 200, parts, r.out);
}
