/**
 * Requests node:http does not give the request listener, answered with a Status instead of a dropped
 * connection or a bare status line (issue 18):
 *
 * - CONNECT: node:http emits it apart and, with nobody listening, destroys the socket. Go's server
 *   hands it to kube-apiserver like any method, so it goes through the one request listener here:
 *   authentication, authorization, then 404 for a path that names nothing (`CONNECT host:443`) or
 *   405 for a resource, which serves no CONNECT.
 * - what the HTTP parser refuses (an unknown method such as `FOO`, a control character in the
 *   target, a malformed header): node:http would write a bare 400 (431, 413, 408) and close. The
 *   same codes, each with its Status, and the connection closed as Go's server closes it.
 */
import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { malformedRequest } from './respond/status.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** For the server's 'connect' event: the request, answered on its socket by the request listener, then the socket closed. */
export function connectAsRequest(listener: Listener): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    const res = new ServerResponse(req);
    // A CONNECT's socket carries no further requests: node:http has already let go of it.
    res.shouldKeepAlive = false;
    // node:http types the event's socket as a Duplex; on a server it is the connection's net.Socket.
    res.assignSocket(socket as Socket);
    res.on('finish', () => {
      res.detachSocket(socket as Socket);
      socket.end();
    });
    listener(req, res);
  };
}

/** node:http's own answers to what it cannot parse (lib/_http_server.js), by error code; anything else is a 400. */
const PARSE_ERROR_CODES: Record<string, 408 | 413 | 431> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** For the server's 'clientError' event. */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // Nothing can be said on a socket already gone, or in the middle of an answer already started.
  if (!socket.writable || (socket as Duplex & { bytesWritten?: number }).bytesWritten !== 0) {
    socket.destroy();
    return;
  }
  const { status } = malformedRequest(PARSE_ERROR_CODES[err.code ?? ''] ?? 400, err.message);
  const body = JSON.stringify(status);
  const head = `HTTP/1.1 ${status.code} ${STATUS_CODES[status.code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  socket.end(head + body, () => socket.destroy());
}
