import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback in front of one port, whose traffic can be held (both ways) and let go:
 * a replica behind it loses its etcd without etcd or the replica knowing, as on a stalled network.
 */
export class HoldingProxy {
  private held = false;
  private readonly flows = new Set<{ release(): void; destroy(): void }>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static start(targetPort: number): Promise<HoldingProxy> {
    let proxy: HoldingProxy | undefined;
    const server = createServer((client) => proxy!.connect(client, targetPort));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const addr = server.address();
        proxy = new HoldingProxy(server, typeof addr === 'object' && addr ? addr.port : 0);
        resolve(proxy);
      });
    });
  }

  private connect(client: Socket, targetPort: number): void {
    const upstream = createConnection(targetPort, '127.0.0.1');
    const queued: [Socket, Buffer][] = [];
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.held) queued.push([to, chunk]);
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const flow = {
      release: () => {
        for (const [to, chunk] of queued.splice(0)) to.write(chunk);
      },
      destroy: () => {
        client.destroy();
        upstream.destroy();
      },
    };
    this.flows.add(flow);
    const end = () => {
      this.flows.delete(flow);
      flow.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }

  hold(): void {
    this.held = true;
  }

  /** Closes every connection through it now (the replica reconnects, through it again). */
  drop(): void {
    for (const f of this.flows) f.destroy();
  }

  release(): void {
    this.held = false;
    for (const f of this.flows) f.release();
  }

  close(): Promise<void> {
    for (const f of this.flows) f.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
