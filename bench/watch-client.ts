/**
 * A watch load generator, run as a child process of the harness (several of them, so reading sockets
 * is not what is measured): opens one raw TCP connection per watch path, sends the request by hand
 * (a chunked HTTP watch, or a WebSocket upgrade), then counts events without parsing them — event
 * lines by their newline (a chunk's own CRLF is told apart by its CR), WebSocket messages by their
 * frame headers — and reads the index of every `sampleEvery`-th event only, timestamped on the
 * shared clock (epoch ms) for the harness to match with the time it sent that write.
 *
 * argv[2]: a file holding the JSON WatchClientConfig (ten thousand paths do not fit in argv). Prints `{"msg":"ready",…}` once every connection has its answer
 * headers, and `{"msg":"result",…}` when sent SIGUSR2 (or at stopAt, a safety bound), then exits.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface WatchClientConfig {
  host: string;
  port: number;
  paths: string[];
  transport: 'http' | 'websocket';
  /** The text right before a write's index in its event, e.g. `"name":"bw-xyz-`. */
  marker: string;
  sampleEvery: number;
  /** Epoch ms at which to report and exit if the harness has not asked by then. */
  stopAt: number;
  /** Print `{"msg":"caught up","at":…}` once this many events were read over all connections (a catch-up watcher's replay). */
  caughtUpAt?: number;
}

export interface WatchClientResult {
  msg: 'result';
  events: number;
  /** Bytes read after the answer headers, over all connections. */
  bytes: number;
  /** [write index, epoch ms received] of the sampled events. */
  samples: [number, number][];
  /** Connections that ended before stopAt (the server ended the watch). */
  ended: number;
  /** The last 200 bytes of the first connection that ended early, to see why. */
  endedTail?: string;
}

const now = () => performance.timeOrigin + performance.now();
const cfg = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as WatchClientConfig;
const marker = Buffer.from(cfg.marker);
const result: WatchClientResult = { msg: 'result', events: 0, bytes: 0, samples: [], ended: 0 };
const sockets: Socket[] = [];
let ready = 0;

function indexAt(b: Buffer, from: number, to: number): number {
  const at = b.indexOf(marker, from);
  if (at < 0 || at >= to) return -1;
  let i = 0;
  for (let k = at + marker.length; k < to; k++) {
    const d = b[k]! - 48;
    if (d < 0 || d > 9) return i;
    i = i * 10 + d;
  }
  return -1;
}

/** Chunked HTTP: an event ends at a \n not preceded by \r (the chunk framing's line ends are CRLF). */
/** Events seen by this process, over all its connections: every sampleEvery-th is timed (a selective watcher sees a few events only). */
let n = 0;

function httpReader(): (b: Buffer) => void {
  let prev = 0;
  let lineStart = 0;
  return (b) => {
    lineStart = 0;
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) {
      const before = i > 0 ? b[i - 1]! : prev;
      if (before !== 13) {
        result.events++;
        if (++n % cfg.sampleEvery === 0) {
          const idx = indexAt(b, lineStart, i);
          if (idx >= 0) result.samples.push([idx, now()]);
        }
      }
      lineStart = i + 1;
    }
    prev = b[b.length - 1] ?? prev;
  };
}

/** WebSocket: walks frame headers (server frames are unmasked), counting text messages. */
function wsReader(): (b: Buffer) => void {
  let header: number[] = [];
  let skip = 0;
  return (b) => {
    let i = 0;
    while (i < b.length) {
      if (skip > 0) {
        const take = Math.min(skip, b.length - i);
        i += take;
        skip -= take;
        continue;
      }
      header.push(b[i++]!);
      const len7 = header.length >= 2 ? header[1]! & 0x7f : -1;
      const need = len7 < 0 ? 2 : len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
      if (header.length < need) continue;
      const len = len7 === 126 ? (header[2]! << 8) | header[3]! : len7 === 127 ? Number(Buffer.from(header.slice(2, 10)).readBigUInt64BE()) : len7;
      if ((header[0]! & 0x0f) === 1) {
        result.events++;
        if (++n % cfg.sampleEvery === 0) {
          const idx = indexAt(b, i, Math.min(b.length, i + len));
          if (idx >= 0) result.samples.push([idx, now()]);
        }
      }
      header = [];
      skip = len;
    }
  };
}

/**
 * Every connection reads into this one buffer (net's onread): no Buffer made and no stream event per
 * read, so a reader process costs little more than its read syscalls and the newline count, and the
 * server, not the readers, is what a cell measures. What outlives a read is copied out of it.
 */
const readBuffer = Buffer.allocUnsafe(256 * 1024);
const TAIL = 200;

function open(path: string): void {
  const ws = cfg.transport === 'websocket';
  const read = ws ? wsReader() : httpReader();
  let head: Buffer | undefined = Buffer.alloc(0);
  const tail = Buffer.alloc(TAIL);
  let tailLength = 0;
  const onRead = (nread: number, buf: Buffer): boolean => {
    const b = buf.subarray(0, nread);
    tailLength = b.copy(tail, 0, Math.max(0, nread - TAIL));
    if (head) {
      head = Buffer.concat([head, b]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return true;
      const status = head.subarray(9, 12).toString();
      if (status !== (ws ? '101' : '200')) {
        process.stderr.write(JSON.stringify({ msg: 'refused', status, head: head.toString('utf8', 0, 300) }) + '\n');
        process.exit(1);
      }
      const rest = head.subarray(end + 4);
      head = undefined;
      if (++ready === cfg.paths.length) process.stderr.write(JSON.stringify({ msg: 'ready' }) + '\n');
      result.bytes += rest.length;
      if (rest.length > 0) read(rest);
      return true;
    }
    result.bytes += nread;
    read(b);
    if (cfg.caughtUpAt !== undefined && result.events >= cfg.caughtUpAt) {
      process.stderr.write(JSON.stringify({ msg: 'caught up', at: now(), bytes: result.bytes }) + '\n');
      cfg.caughtUpAt = undefined;
    }
    return true;
  };
  const s = connect({ host: cfg.host, port: cfg.port, onread: { buffer: readBuffer, callback: onRead } });
  sockets.push(s);
  s.setNoDelay(true);
  s.write(
    `GET ${path} HTTP/1.1\r\nHost: ${cfg.host}:${cfg.port}\r\nAccept: application/json\r\n` +
      (ws ? `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` : '') +
      '\r\n',
  );
  s.on('error', () => undefined);
  s.on('close', () => {
    if (reporting) return;
    result.ended++;
    result.endedTail ??= tail.toString('utf8', 0, tailLength);
  });
}

// A few hundred connections at a time, so the server's accept queue does not overflow.
let next = 0;
const openSome = () => {
  for (let k = 0; k < 200 && next < cfg.paths.length; k++) open(cfg.paths[next++]!);
  if (next < cfg.paths.length) setTimeout(openSome, 5);
};
openSome();
let reporting = false;
const report = () => {
  reporting = true;
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
  for (const s of sockets) s.destroy();
};
process.once('SIGUSR2', report);
setTimeout(report, Math.max(0, cfg.stopAt - now()));
