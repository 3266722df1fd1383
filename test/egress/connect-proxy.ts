/**
 * A real HTTP CONNECT proxy for tests: listens on 127.0.0.1 over plain TCP, over TLS requiring a
 * client certificate, or on a unix socket; counts the tunnels it opens, remembers their targets and
 * the client certificate's name, and can be told to refuse.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Pki } from '../auth/oidc-issuer.js';

export type ProxyListen = { tcp: true } | { tls: { serving: Pki; clientCa: string } } | { uds: string };

export class ConnectProxy {
  private server!: Server;
  private readonly sockets = new Set<Duplex>();
  /** `host:port` of every tunnel opened, in order. */
  readonly tunnels: string[] = [];
  /** The common name of each TLS client that asked for a tunnel. */
  readonly clientNames: string[] = [];
  /** Answer every CONNECT with this status instead of opening the tunnel. */
  refuseWith: number | undefined;
  /** Accept connections and never answer (a hung proxy). */
  silent = false;
  /** http://127.0.0.1:port, https://127.0.0.1:port or the socket path. */
  address = '';

  constructor(private readonly listen: ProxyListen) {}

  async start(): Promise<this> {
    this.server =
      'tls' in this.listen
        ? createHttpsServer({ cert: this.listen.tls.serving.cert, key: this.listen.tls.serving.key, ca: this.listen.tls.clientCa, requestCert: true, rejectUnauthorized: true })
        : createHttpServer();
    this.server.on('connection', (s: Socket) => this.track(s));
    this.server.on('secureConnection', (s: TLSSocket) => this.track(s));
    this.server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => this.onConnect(req, client, head));
    const listen = this.listen;
    if ('uds' in listen) {
      await new Promise<void>((resolve) => this.server.listen(listen.uds, resolve));
      this.address = listen.uds;
    } else {
      await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
      this.address = `${'tls' in listen ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    }
    return this;
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
  }

  private onConnect(req: IncomingMessage, client: Duplex, head: Buffer): void {
    if (this.silent) return;
    const peer = (req.socket as TLSSocket).getPeerCertificate?.();
    if (peer?.subject) this.clientNames.push(String(peer.subject.CN));
    if (this.refuseWith !== undefined) {
      client.end(`HTTP/1.1 ${this.refuseWith} Forbidden\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const target = req.url ?? '';
    const [, host, port] = /^\[?([^\]]+)\]?:(\d+)$/.exec(target) ?? [];
    const upstream = connect(Number(port), host, () => {
      this.tunnels.push(target);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
