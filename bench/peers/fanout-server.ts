/**
 * The bare fan-out peer: what writing watch events to N sockets costs on this machine, with nothing
 * of orchd. A plain node:http server in its own process: a watch request (chunked HTTP, or a WebSocket
 * upgrade answered by hand) registers its socket under its namespace, or its `regarding.name` field
 * selector; a POST of an Event to /…/namespaces/<ns>/events is parsed, given a version, encoded once
 * as an ADDED line, answered 201, and the same bytes are queued for every socket that watches it,
 * written once per event-loop turn per socket (cork/uncork). Prints a JSON `ready` line with its url.
 */
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { frameHeader } from '../../src/http/handlers/websocket-frame.js';

type Target = { kind: 'http'; res: ServerResponse } | { kind: 'websocket'; socket: Socket };
const watchers = new Map<string, Set<Target>>();
const queued = new Map<Target, Buffer[]>();
let version = 1;
let flushing = false;

function keyOf(url: URL): string {
  const field = url.searchParams.get('fieldSelector');
  if (field?.startsWith('regarding.name=')) return `f:${field.slice('regarding.name='.length)}`;
  const m = /\/namespaces\/([^/]+)\//.exec(url.pathname);
  return m ? `n:${m[1]}` : 'all';
}

function watch(key: string, t: Target, onClose: (fn: () => void) => void): void {
  let set = watchers.get(key);
  if (!set) watchers.set(key, (set = new Set()));
  set.add(t);
  onClose(() => {
    set.delete(t);
    queued.delete(t);
  });
}

function flush(): void {
  flushing = false;
  for (const [t, lines] of queued) {
    if (t.kind === 'http') {
      t.res.cork();
      for (const l of lines) t.res.write(l);
      t.res.uncork();
    } else {
      t.socket.cork();
      for (const l of lines) {
        t.socket.write(frameHeader(l.length));
        t.socket.write(l);
      }
      t.socket.uncork();
    }
  }
  queued.clear();
}

function publish(line: Buffer, keys: string[]): void {
  for (const k of keys) {
    const set = watchers.get(k);
    if (!set) continue;
    for (const t of set) {
      const q = queued.get(t);
      if (q) q.push(line);
      else queued.set(t, [line]);
    }
  }
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://peer');
  if (req.method === 'GET' && url.searchParams.get('watch') !== null) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    watch(keyOf(url), { kind: 'http', res }, (fn) => res.on('close', fn));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const m = /\/namespaces\/([^/]+)\/events$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return void res.writeHead(404).end();
    const obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata: { resourceVersion?: string }; regarding?: { name?: string } };
    obj.metadata.resourceVersion = String(++version);
    const json = JSON.stringify(obj);
    res.writeHead(201, { 'content-type': 'application/json' }).end(json);
    const keys = [`n:${m[1]}`, 'all'];
    if (obj.regarding?.name) keys.push(`f:${obj.regarding.name}`);
    publish(Buffer.from(`{"type":"ADDED","object":${json}}\n`), keys);
  });
});
server.on('upgrade', (req, socket: Socket) => {
  const url = new URL(req.url ?? '/', 'http://peer');
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.on('error', () => undefined);
  socket.resume();
  watch(keyOf(url), { kind: 'websocket', socket }, (fn) => socket.on('close', fn));
});
server.keepAliveTimeout = 60_000;
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(JSON.stringify({ msg: 'ready', url: `http://127.0.0.1:${port}` }) + '\n');
});
// Upgraded sockets are no longer the server's: a clean close would wait for them; the harness stops this peer by PID.
process.once('SIGTERM', () => process.exit(0));
