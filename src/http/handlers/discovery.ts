import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindStrategy } from '../../api/strategy.js';
import { discoveryDocuments } from '../../discovery/discovery.js';
import { openApiDocuments, v3Url } from '../../openapi/openapi.js';
import type { Route } from '../router.js';
import { notModified, type Served } from '../../discovery/served.js';
import { methodNotAllowed, notAcceptable, pathNotFound } from '../respond/status.js';

type DiscoveryRoute = Extract<Route, { type: 'discovery' }>;

/** Writes a pre-encoded document with its ETag; a matching If-None-Match gets 304 and no body. */
function sendServed(req: IncomingMessage, res: ServerResponse, doc: Served, cacheControl?: string): void {
  res.setHeader('ETag', `"${doc.etag}"`);
  res.setHeader('Vary', 'Accept');
  if (cacheControl) res.setHeader('Cache-Control', cacheControl);
  if (notModified(req.headers['if-none-match'], doc.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', doc.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(doc.body));
  res.end(req.method === 'HEAD' ? undefined : doc.body);
}

function readOnly(req: IncomingMessage): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method ?? '');
}

/** /version, /api, /apis, /apis/<group>, /api/v1 and /apis/<group>/<version>. */
export function handleDiscovery(req: IncomingMessage, res: ServerResponse, r: DiscoveryRoute, kinds: readonly KindStrategy[]): void {
  const docs = discoveryDocuments(kinds);
  let doc: Served | undefined;
  switch (r.path) {
    case 'version':
      doc = docs.version;
      break;
    case 'api':
    case 'apis':
      // The address clients are told to use is the one they reached us at (Kubernetes' serverAddressByClientCIDRs).
      doc = docs.root(r.path, req.headers.accept, req.headers.host);
      break;
    case 'group':
      doc = docs.group(r.group);
      break;
    case 'groupVersion':
      doc = docs.groupVersion(r.group, r.version);
      break;
  }
  // A path that names no document is not found whatever the method (Kubernetes routes before it checks methods).
  if (!doc) throw pathNotFound();
  readOnly(req);
  sendServed(req, res, doc);
}

/** /openapi/v2, /openapi/v3 and /openapi/v3/<group-version>?hash=…, as kube-openapi serves them. */
export async function handleOpenApi(req: IncomingMessage, res: ServerResponse, url: URL, path: string, kinds: readonly KindStrategy[]): Promise<void> {
  readOnly(req);
  const docs = openApiDocuments(kinds);
  if (path === 'v2') {
    const doc = await docs.v2(req.headers.accept);
    if (!doc) throw notAcceptable(String(req.headers.accept ?? ''));
    return sendServed(req, res, doc);
  }
  if (path === 'v3') return sendServed(req, res, docs.v3Index());
  if (!path.startsWith('v3/')) throw pathNotFound();
  const key = path.slice(3);
  const doc = docs.v3(key);
  if (!doc) throw pathNotFound();
  const hash = url.searchParams.get('hash');
  if (hash === null) return sendServed(req, res, doc, 'no-cache, private');
  if (hash !== doc.etag) {
    // A stale link: send the client to the current one, as kube-openapi does.
    res.statusCode = 301;
    res.setHeader('Location', v3Url(key, doc.etag));
    res.end();
    return;
  }
  sendServed(req, res, doc, 'public, immutable');
}
