/**
 * Where a request carries its bearer token: `Authorization: Bearer <token>` (the scheme in any case,
 * an empty token being no token), or, on a WebSocket upgrade whose client cannot set headers, a
 * `base64url.bearer.authorization.k8s.io.<token>` subprotocol (the name clients hard-code).
 */
import type { IncomingHttpHeaders } from 'node:http';

const WS_BEARER_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization?.trim();
  if (auth) {
    const parts = auth.split(' ');
    if (parts.length >= 2 && parts[0]!.toLowerCase() === 'bearer' && parts[1] !== '') return parts[1];
    return undefined;
  }
  const isWebSocket = headers.upgrade?.toLowerCase() === 'websocket';
  if (!isWebSocket) return undefined;
  const offered = (headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const encoded = offered.find((p) => p.startsWith(WS_BEARER_PREFIX));
  if (encoded === undefined) return undefined;
  const token = Buffer.from(encoded.slice(WS_BEARER_PREFIX.length), 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}
