/**
 * The HTTP ceiling: a bare node:http server in its own process, answering with the same bytes orchd
 * would, doing nothing else. POST /echo reads the body, parses and re-serializes it and answers 201
 * (the least a JSON create can do); PUT /fixed/<name> stores a reply that GET /fixed/<name> returns.
 * Given a folder (its one argument), POST /durable does what /echo does and answers only once the
 * body is in a synced LevelDB batch, batched as orchd's log batches (every append of a turn of the
 * event loop, one batch in flight): the least a durable JSON create can cost in Node on this machine.
 * Run by the harness as a child; prints a JSON `ready` line with its url on stderr, like orchd.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Level } from 'level';

/** Appends of one turn of the event loop share a synced chained batch; one batch is written at a time. */
class GroupCommit {
  private seq = 0;
  private queued: { values: Buffer[]; done: Promise<void>; resolve(): void; reject(err: unknown): void } | undefined;
  private writing = false;

  constructor(private readonly db: Level<Buffer, Buffer>) {}

  open(): Promise<void> {
    return this.db.open();
  }

  close(): Promise<void> {
    return this.db.close();
  }

  append(value: Buffer): Promise<void> {
    if (!this.queued) {
      let resolve = () => {};
      let reject: (err: unknown) => void = () => {};
      const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      this.queued = { values: [], done, resolve, reject };
      if (!this.writing) setImmediate(() => this.flush());
    }
    this.queued.values.push(value);
    return this.queued.done;
  }

  private flush(): void {
    const batch = this.queued;
    if (!batch || this.writing) return;
    this.queued = undefined;
    this.writing = true;
    const chain = this.db.batch();
    for (const v of batch.values) {
      const key = Buffer.alloc(8);
      key.writeBigUInt64BE(BigInt(++this.seq));
      chain.put(key, v);
    }
    chain
      .write({ sync: true })
      .then(batch.resolve, batch.reject)
      .finally(() => {
        this.writing = false;
        this.flush();
      });
  }
}

const fixed = new Map<string, Buffer>();
const durable = process.argv[2] ? new GroupCommit(new Level<Buffer, Buffer>(process.argv[2], { keyEncoding: 'buffer', valueEncoding: 'buffer' })) : undefined;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    if (req.method === 'POST' && (url === '/echo' || (url === '/durable' && durable))) {
      // What a server does with a create's body at the least: parse it, write it back.
      let out: string;
      try {
        out = JSON.stringify(JSON.parse(body.toString('utf8')));
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (url === '/echo' || !durable) return void res.writeHead(201, { 'content-type': 'application/json' }).end(out);
      durable.append(Buffer.from(out)).then(
        () => res.writeHead(201, { 'content-type': 'application/json' }).end(out),
        () => res.writeHead(500).end(),
      );
    } else if (url.startsWith('/fixed/') && req.method === 'PUT') {
      fixed.set(url, body);
      res.writeHead(204).end();
    } else if (url.startsWith('/fixed/') && req.method === 'GET' && fixed.has(url)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(fixed.get(url));
    } else {
      res.writeHead(404).end();
    }
  });
});
server.keepAliveTimeout = 60_000;
void (durable?.open() ?? Promise.resolve()).then(() =>
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stderr.write(JSON.stringify({ msg: 'ready', url: `http://127.0.0.1:${port}` }) + '\n');
  }),
);
process.once('SIGTERM', () => server.close(() => void (durable?.close() ?? Promise.resolve()).then(() => process.exit(0))));
