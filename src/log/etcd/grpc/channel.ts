import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import { decodeAuthenticateResponse, encodeAuthenticate } from './proto.js';

/** gRPC status codes this client tells apart (grpc's codes). */
export const Code = { DeadlineExceeded: 4, Unavailable: 14, Unauthenticated: 16 } as const;

/** A call that failed: code is the gRPC status (Unavailable when the connection failed or was lost). */
export class GrpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** Whether the request may have reached etcd (false: it never left this process). */
    readonly sent = true,
  ) {
    super(message);
    this.name = 'GrpcError';
  }
}

export interface ChannelTls {
  /** PEM: the CA etcd's server certificate is checked against (default: Node's roots). */
  ca?: Buffer;
  /** PEM: this client's certificate and key, for etcd's --client-cert-auth. */
  cert?: Buffer;
  key?: Buffer;
}

export interface ChannelOptions {
  /** etcd client URLs (http:// or https://), tried in turn. */
  servers: string[];
  tls?: ChannelTls;
  /** etcd's auth (etcdctl user add): a token is asked for once and again when etcd says it expired. */
  auth?: { username: string; password: string };
}

export interface StreamHandlers {
  /** The messages one read of the connection brought, in order: one call for all of them. */
  onMessages(messages: Buffer[]): void;
  /** Called once when the stream ends for any reason but cancel(). */
  onEnd(err: GrpcError): void;
}

export interface BidiStream {
  write(message: Uint8Array): void;
  cancel(): void;
}

/** The gRPC length-prefixed message: a compressed flag (0) and a 4-byte big-endian length. */
function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** Cuts a stream's data into gRPC messages, whatever the chunking. */
class Deframer {
  private pending: Buffer | undefined;

  /** The whole messages the chunk completes (none: it holds part of one). */
  push(chunk: Buffer): Buffer[] {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      out.push(buf.subarray(5, 5 + len));
      buf = buf.subarray(5 + len);
    }
    this.pending = buf.length > 0 ? buf : undefined;
    return out;
  }
}

/** The gRPC status an answer's headers or trailers carry, or undefined when they carry none. */
function statusOf(headers: Record<string, unknown>): GrpcError | null | undefined {
  const status = headers['grpc-status'];
  if (status === undefined) return undefined;
  if (Number(status) === 0) return null;
  const message = headers['grpc-message'];
  return new GrpcError(Number(status), typeof message === 'string' ? decodeURIComponent(message) : `gRPC status ${status}`);
}

/** How often the deadlines of calls in flight are checked: one timer for all of them, not one per call. */
const SWEEP_MS = 250;

interface Pending {
  stream: ClientHttp2Stream;
  deadline: number;
  fail(err: GrpcError): void;
}

/**
 * One HTTP/2 connection to one etcd member at a time, carrying every unary call and stream of the
 * log; when it is lost (or given up: drop()), the next call connects to the next member of the list,
 * so a dead member costs the calls in flight on it and no more. The library client (etcd3 on grpc-js)
 * did the same per call through several layers that cost ~0.3 ms of CPU per Txn (bench/RESULTS.md 36).
 * Writes of one tick share one socket write: Node's http2 sends what nghttp2 holds once per turn
 * of the event loop, as a corked socket would.
 */
export class Channel {
  private session: ClientHttp2Session | undefined;
  private connected = false;
  private turn = 0;
  private token: string | undefined;
  private authenticating: Promise<string> | undefined;
  private readonly pending = new Set<Pending>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: ChannelOptions) {
    if (options.servers.length === 0) throw new Error('no etcd servers');
  }

  private current(): ClientHttp2Session {
    if (this.closed) throw new GrpcError(Code.Unavailable, 'the etcd client is closed', false);
    const live = this.session;
    if (live && !live.closed && !live.destroyed) return live;
    const url = this.options.servers[this.turn++ % this.options.servers.length];
    const tls = this.options.tls;
    const session = connect(url, tls ? { ca: tls.ca, cert: tls.cert, key: tls.key } : {});
    this.session = session;
    this.connected = false;
    session.once('connect', () => {
      if (this.session === session) this.connected = true;
    });
    // Lost: the next call connects again (to the next member); its streams end by themselves.
    const lost = () => {
      if (this.session === session) this.session = undefined;
    };
    session.on('error', lost);
    session.on('close', lost);
    session.on('goaway', () => {
      lost();
      session.close();
    });
    return session;
  }

  /** Gives up the connection (a member that does not answer): the next call goes to the next member. */
  drop(): void {
    const s = this.session;
    this.session = undefined;
    s?.destroy();
  }

  private headers(path: string, timeoutMs?: number): OutgoingHttpHeaders | Promise<OutgoingHttpHeaders> {
    const h: OutgoingHttpHeaders = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' };
    if (timeoutMs !== undefined) h['grpc-timeout'] = `${Math.max(1, Math.ceil(timeoutMs))}m`;
    if (!this.options.auth) return h;
    // A token in hand is used at once: only asking for one waits.
    if (this.token !== undefined) {
      h.token = this.token;
      return h;
    }
    return this.authToken().then((token) => {
      h.token = token;
      return h;
    });
  }

  private authToken(): Promise<string> {
    if (this.token !== undefined) return Promise.resolve(this.token);
    this.authenticating ??= (async () => {
      const { username, password } = this.options.auth!;
      try {
        this.token = await this.call(
          encodeAuthenticate(username, password),
          5000,
          { ':method': 'POST', ':path': '/etcdserverpb.Auth/Authenticate', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '5000m' },
          decodeAuthenticateResponse,
        );
        return this.token;
      } finally {
        this.authenticating = undefined;
      }
    })();
    return this.authenticating;
  }

  /**
   * One unary call. Not retried once it may have reached etcd (a Txn sent twice could apply twice);
   * retried on the next member when it never left (the connection could not be made), and once
   * with a new token when etcd says the token expired (etcd refused it: nothing was applied).
   */
  unary<T>(path: string, message: Uint8Array, timeoutMs: number, decode: (answer: Buffer) => T, attempt = 0): Promise<T> {
    const headers = this.headers(path, timeoutMs);
    // Without a token to ask for, the call starts in this turn and costs one promise, not a chain.
    const answered = headers instanceof Promise ? headers.then((h) => this.call(message, timeoutMs, h, decode)) : this.call(message, timeoutMs, headers, decode);
    return answered.catch((err: unknown) => {
      if (!(err instanceof GrpcError) || attempt >= this.options.servers.length) throw err;
      if (err.code === Code.Unauthenticated && this.options.auth && attempt === 0) this.token = undefined;
      else if (err.sent) throw err;
      return this.unary(path, message, timeoutMs, decode, attempt + 1);
    });
  }

  private call<T>(message: Uint8Array, timeoutMs: number, headers: OutgoingHttpHeaders, decode: (answer: Buffer) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Inside the executor: a closed client's throw is this call's rejection.
      const session = this.current();
      const wasConnected = this.connected;
      let stream: ClientHttp2Stream;
      try {
        stream = session.request(headers);
      } catch (err) {
        return reject(new GrpcError(Code.Unavailable, (err as Error).message, false));
      }
      const chunks: Buffer[] = [];
      let status: GrpcError | null | undefined;
      let settled = false;
      const entry: Pending = {
        stream,
        deadline: performance.now() + timeoutMs,
        fail: (err) => {
          if (settled) return;
          settled = true;
          this.pending.delete(entry);
          stream.close(constants.NGHTTP2_CANCEL);
          reject(err);
        },
      };
      this.track(entry);
      const took = (h: Record<string, unknown>) => {
        const s = statusOf(h);
        if (s !== undefined) status = s;
      };
      /** The answer, once its status is in and its message whole. */
      const answer = (): Buffer | undefined => {
        if (status !== null) return undefined;
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        return body.length >= 5 && body.length >= 5 + body.readUInt32BE(1) ? body.subarray(5, 5 + body.readUInt32BE(1)) : undefined;
      };
      const done = (value: Buffer) => {
        settled = true;
        this.pending.delete(entry);
        try {
          resolve(decode(value));
        } catch (err) {
          reject(err);
        }
      };
      stream.on('response', took);
      // Answered at the trailers when the message is in: the stream's close comes a turn later.
      stream.on('trailers', (h) => {
        took(h);
        const value = settled ? undefined : answer();
        if (value) done(value);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', () => {});
      stream.on('close', () => {
        if (settled) return;
        if (status) {
          settled = true;
          this.pending.delete(entry);
          return reject(status);
        }
        const value = answer();
        if (value) return done(value);
        settled = true;
        this.pending.delete(entry);
        const why = stream.rstCode ? `stream reset (${stream.rstCode})` : 'the connection was lost';
        reject(new GrpcError(Code.Unavailable, why, wasConnected || this.connectedTo(session)));
      });
      stream.end(frame(message));
    });
  }

  private connectedTo(session: ClientHttp2Session): boolean {
    return this.session === session && this.connected;
  }

  /** A bidirectional stream (a watch), open until cancel() or until it fails. */
  stream(path: string, h: StreamHandlers): Promise<BidiStream> {
    return Promise.resolve(this.headers(path)).then((headers) => {
      const stream = this.current().request(headers);
      const deframer = new Deframer();
      let status: GrpcError | null | undefined;
      let done = false;
      const took = (hd: Record<string, unknown>) => {
        const s = statusOf(hd);
        if (s !== undefined) status = s;
      };
      stream.on('response', took);
      stream.on('trailers', took);
      stream.on('data', (chunk: Buffer) => {
        if (done) return;
        const messages = deframer.push(chunk);
        if (messages.length > 0) h.onMessages(messages);
      });
      stream.on('error', () => {});
      stream.on('close', () => {
        if (done) return;
        done = true;
        if (status?.code === Code.Unauthenticated) this.token = undefined;
        h.onEnd(status ?? new GrpcError(Code.Unavailable, status === null ? 'the etcd watch stream ended' : 'the etcd connection was lost'));
      });
      return {
        write: (message: Uint8Array) => {
          if (!done && !stream.destroyed) stream.write(frame(message));
        },
        cancel: () => {
          if (done) return;
          done = true;
          stream.close(constants.NGHTTP2_CANCEL);
        },
      };
    });
  }

  private track(entry: Pending): void {
    this.pending.add(entry);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
  }

  private sweep(): void {
    const now = performance.now();
    for (const p of this.pending) if (p.deadline <= now) p.fail(new GrpcError(Code.DeadlineExceeded, 'context deadline exceeded'));
    if (this.pending.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const p of this.pending) p.fail(new GrpcError(Code.Unavailable, 'the etcd client is closed'));
    // Streams still open (a watch being cancelled) must not keep the process up.
    this.session?.destroy();
    this.session = undefined;
  }
}
