/**
 * Bounds on how long a client may take to send its request, so that connections that trickle
 * their headers or body (slowloris) are cut and cannot hold the server's sockets and memory:
 *   - headers within 32 s: kube-apiserver's http.Server ReadHeaderTimeout ("just shy of
 *     requestTimeoutUpperBound", 34 s). Go enforces it as a read deadline, to the millisecond; Node
 *     checks its headersTimeout every connectionsCheckingInterval (30 s by default, which made a
 *     60 s bound take up to 88 s), so the check runs every second here. A connection that sends
 *     nothing at all is cut at the same bound. As Go does, the connection is closed without an answer:
 *     there is no request to answer.
 *   - the whole request, body included, within the request timeout (`--request-timeout`,
 *     kube-apiserver's 60 s default); past it the request is answered with kube-apiserver's 504
 *     Timeout Status and the connection closed. Node counts it only until the request is
 *     received, so a watch (a GET, no body) streams for as long as it likes.
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sendError } from './respond/respond.js';
import { requestTimeout } from './respond/status.js';

export const HEADERS_TIMEOUT_MS = 32_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const CHECK_INTERVAL_MS = 1_000;

/** The options of http.createServer that bound a request's arrival; Node refuses a header bound above the request's. */
export function arrivalBounds(requestTimeoutMs: number, headersTimeoutMs = HEADERS_TIMEOUT_MS) {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeoutMs),
  };
}

type ClientErrorListener = (err: NodeJS.ErrnoException, socket: Socket) => void;

/**
 * Answers the clients Node finds too slow; other client errors (a request Node cannot parse) go to
 * `otherErrors` (a server has one clientError listener: this is it).
 * Returns the function the request listener calls for each request, so that a request cut while its
 * handler reads the body gets its Status on its response.
 */
export function cutSlowClients(http: HttpServer, otherErrors: ClientErrorListener): (req: IncomingMessage, res: ServerResponse) => void {
  const receiving = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  http.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT') return otherErrors(err, socket);
    const pending = receiving.get(socket);
    if (!pending || pending.res.headersSent) return void socket.destroy();
    const { req, res } = pending;
    res.setHeader('Connection', 'close');
    // Node forgets a request once its response is finished: the handler still reading its body
    // would never hear that the connection went, so the request is ended here.
    res.once('finish', () => {
      socket.destroy();
      req.destroy();
    });
    sendError(res, requestTimeout(), { format: 'json', pretty: false });
  });
  return (req, res) => {
    receiving.set(req.socket, { req, res });
    res.once('close', () => receiving.get(req.socket)?.res === res && receiving.delete(req.socket));
  };
}
