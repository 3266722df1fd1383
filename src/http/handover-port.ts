/**
 * A listening port whose connections are handed to one HTTP server at a time, and held while none
 * takes them. A replay that becomes a fork (`orchd replay --fork`) keeps its port open through the
 * switch: a client that connects while the replay closes and the fork's server starts waits for the
 * fork instead of being refused (ECONNREFUSED), which client-node's informer treats as fatal.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';

/**
 * Connections the kernel may hold before they are accepted. Node asks for 511; Go's listener (and so
 * kube-apiserver) asks for the kernel's maximum (net.core.somaxconn, which caps this). Thousands of
 * watches opened at once, as informers do after a restart, overflowed 511 and were refused.
 */
export const LISTEN_BACKLOG = 65_535;

export class HandoverPort {
  private target: HttpServer | undefined;
  private readonly held = new Set<Socket>();
  private closing: Promise<void> | undefined;
  private readonly told = new WeakSet<HttpServer>();

  private constructor(private readonly listener: NetServer) {
    // Paused: nothing is read from a connection until the server it is handed to reads it.
    listener.on('connection', (socket: Socket) => this.accept(socket));
  }

  /** Listens on host:port (0 picks a free port); rejects with the listen's error (EADDRINUSE). */
  static listen(port: number, host: string): Promise<HandoverPort> {
    const listener = createServer({ pauseOnConnect: true });
    return new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
        listener.off('error', reject);
        resolve(new HandoverPort(listener));
      });
    });
  }

  get port(): number {
    return (this.listener.address() as AddressInfo).port;
  }

  /** From now on connections go to http, those held first. */
  serve(http: HttpServer): void {
    // Node tracks an HTTP server's connections (which are idle at close, which are too slow) from its
    // 'listening' event: a server that never listens itself is told once, or its close would leave
    // idle keep-alive connections open, answering 503 "shutting down" after the switch.
    if (!this.told.has(http)) {
      this.told.add(http);
      http.emit('listening');
    }
    this.target = http;
    for (const socket of this.held) this.accept(socket);
  }

  /** New connections wait (the kernel's and this port's queue) until serve() names the next server. */
  hold(): void {
    this.target = undefined;
  }

  /** Stops accepting; connections still held are closed. Connections handed over are their server's to close. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.target = undefined;
    // Not waited for: net's close waits for every connection accepted, and those handed over close with their server, after this.
    this.listener.close();
    for (const socket of this.held) socket.destroy();
    this.held.clear();
    return (this.closing = Promise.resolve());
  }

  private accept(socket: Socket): void {
    this.held.delete(socket);
    if (this.closing) return void socket.destroy();
    if (!this.target) {
      this.held.add(socket);
      return;
    }
    // As a listening HTTP server sets its own (noDelay defaults to true there).
    socket.setNoDelay(true);
    this.target.emit('connection', socket);
    socket.resume();
  }
}
