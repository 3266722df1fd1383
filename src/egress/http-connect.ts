/**
 * An HTTP CONNECT tunnel: over a connection to the proxy (TCP, TLS or a unix socket), ask for
 * `CONNECT host:port`, wait for a 2xx answer, and hand back the same connection, now a byte pipe to
 * the destination. Kubernetes' egress dialer does the same for its HTTPConnect selections.
 */
import type { Duplex } from 'node:stream';

/** What went wrong, for callers that decide by kind (and tests); the message says it for people. */
export type EgressErrorCode = 'EGRESS_PROXY_UNREACHABLE' | 'EGRESS_PROXY_REFUSED' | 'EGRESS_PROXY_TIMEOUT' | 'EGRESS_PROXY_PROTOCOL';

export class EgressError extends Error {
  constructor(
    readonly code: EgressErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EgressError';
  }
}

/** A proxy answer head larger than this is not an HTTP proxy talking. */
const MAX_HEAD_BYTES = 16 * 1024;

export interface TunnelRequest {
  /** The connection to the proxy; its 'connect'/'secureConnect' need not have happened yet. */
  socket: Duplex;
  /** How the proxy is named in errors (its URL or socket path). */
  proxy: string;
  /** The event after which the proxy connection is usable: 'connect' (TCP, UDS) or 'secureConnect' (TLS). */
  readyEvent: 'connect' | 'secureConnect';
  host: string;
  port: number;
  timeoutMs: number;
}

/**
 * Resolves with the tunnelled connection, or rejects with an EgressError (proxy unreachable, refused,
 * silent past timeoutMs, or not speaking HTTP); the proxy connection is destroyed on failure.
 */
export function openTunnel(t: TunnelRequest): Promise<Duplex> {
  const target = `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
  const { socket } = t;
  return new Promise((resolve, reject) => {
    let connected = false;
    let head = Buffer.alloc(0);
    const fail = (err: EgressError) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onReady = () => {
      connected = true;
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    };
    const onError = (err: Error) =>
      fail(
        connected
          ? new EgressError('EGRESS_PROXY_PROTOCOL', `egress proxy ${t.proxy}: connection failed while asking to CONNECT ${target}: ${err.message}`, { cause: err })
          : new EgressError('EGRESS_PROXY_UNREACHABLE', `cannot connect to egress proxy ${t.proxy}: ${err.message}`, { cause: err }),
      );
    const onEnd = () => fail(new EgressError('EGRESS_PROXY_PROTOCOL', `egress proxy ${t.proxy} closed the connection before answering CONNECT ${target}`));
    // Paused-mode reads: nothing past the answer head may be consumed, the destination's TLS needs it.
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > MAX_HEAD_BYTES) return fail(new EgressError('EGRESS_PROXY_PROTOCOL', `egress proxy ${t.proxy}: answer to CONNECT has no end of headers within ${MAX_HEAD_BYTES} bytes`));
          continue;
        }
        const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
        const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
        if (!m) return fail(new EgressError('EGRESS_PROXY_PROTOCOL', `egress proxy ${t.proxy}: answer to CONNECT ${target} is not HTTP: ${JSON.stringify(statusLine.slice(0, 100))}`));
        const code = Number(m[1]);
        if (code < 200 || code > 299) return fail(new EgressError('EGRESS_PROXY_REFUSED', `egress proxy ${t.proxy} refused CONNECT ${target}: ${code} ${m[2] ?? ''}`.trimEnd()));
        // The destination speaks TLS and the client speaks first, so a proxy that already sent more
        // than its answer is broken (or not a tunnel); Kubernetes' dialer refuses it too.
        if (head.length > end + 4) return fail(new EgressError('EGRESS_PROXY_PROTOCOL', `egress proxy ${t.proxy}: ${head.length - end - 4} unexpected bytes after its answer to CONNECT ${target}`));
        cleanup();
        return resolve(socket);
      }
    };
    const timer = setTimeout(() => fail(new EgressError('EGRESS_PROXY_TIMEOUT', `egress proxy ${t.proxy}: no answer to CONNECT ${target} within ${t.timeoutMs} ms`)), t.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off(t.readyEvent, onReady);
      socket.off('error', onError);
      socket.off('end', onEnd);
      socket.off('readable', onReadable);
    };
    socket.once(t.readyEvent, onReady);
    socket.on('error', onError);
    socket.on('end', onEnd);
    socket.on('readable', onReadable);
  });
}
