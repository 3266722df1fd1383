/**
 * The HTTP ceiling: a bare node:http server in its own process, answering with the same bytes orchd
 * would, doing nothing else. POST /echo reads the body, parses and re-serializes it and answers 201
 * (the least a JSON create can do); PUT /fixed/<name> stores a reply that GET /fixed/<name> returns.
 * Run by the harness as a child; prints a JSON `ready` line with its url on stderr, like orchd.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const fixed = new Map<string, Buffer>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    if (req.method === 'POST' && url === '/echo') {
      let out: string;
      try {
        out = JSON.stringify(JSON.parse(body.toString('utf8')));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(out);
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
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(JSON.stringify({ msg: 'ready', url: `http://127.0.0.1:${port}` }) + '\n');
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
