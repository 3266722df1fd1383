/**
 * Watch clients for the tests: a chunked HTTP watch read line by line through node:http, and a
 * WebSocket watch through `ws`. Both collect parsed events and let a test wait for what it expects.
 */
import { request, type IncomingMessage, type ClientRequest } from 'node:http';
import WebSocket from 'ws';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: any;
}

const DEFAULT_WAIT_MS = 20_000;

export class EventLog {
  readonly events: WatchEvent[] = [];
  /** Raw lines/messages as received, before parsing. */
  readonly raw: string[] = [];
  closed = false;
  private readonly waiters = new Set<() => void>();
  private closeWaiters: (() => void)[] = [];

  push(text: string): void {
    this.raw.push(text);
    this.events.push(JSON.parse(text) as WatchEvent);
    this.notify();
  }

  close(): void {
    this.closed = true;
    for (const w of this.closeWaiters) w();
    this.closeWaiters = [];
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves with the events once pred holds for them; rejects after ms or if the stream ends first. */
  until(pred: (events: WatchEvent[]) => boolean, what: string, ms = DEFAULT_WAIT_MS): Promise<WatchEvent[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pred(this.events)) {
          done();
          resolve(this.events);
        } else if (this.closed) {
          done();
          reject(new Error(`stream ended before ${what}; got ${this.events.length} events: ${summary(this.events)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what}; got ${this.events.length} events: ${summary(this.events)}`));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  count(n: number, ms?: number): Promise<WatchEvent[]> {
    return this.until((e) => e.length >= n, `${n} events`, ms);
  }

  ended(ms = DEFAULT_WAIT_MS): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stream did not end; got ${summary(this.events)}`)), ms);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Events other than bookmarks. */
  changes(): WatchEvent[] {
    return this.events.filter((e) => e.type !== 'BOOKMARK');
  }
}

const summary = (events: WatchEvent[]): string =>
  events
    .slice(-8)
    .map((e) => `${e.type}:${e.object?.metadata?.name ?? e.object?.reason ?? ''}@${e.object?.metadata?.resourceVersion ?? ''}`)
    .join(' ');

export class HttpWatch extends EventLog {
  res!: IncomingMessage;
  req!: ClientRequest;
  /** Sizes of the data pieces as they arrived (a piece may hold several chunks). */
  readonly pieces: number[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** Body text when the answer was not a 200 stream. */
  body = '';

  static open(base: string, path: string, headers: Record<string, string> = {}): Promise<HttpWatch> {
    const w = new HttpWatch();
    return new Promise((resolve, reject) => {
      const url = new URL(path, base);
      w.req = request(url, { method: 'GET', headers, agent: false }, (res) => {
        w.res = res;
        w.status = res.statusCode ?? 0;
        w.headers = res.headers;
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          w.pieces.push(d.length);
          if (w.status !== 200) {
            w.body += d;
            return;
          }
          buf += d;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() !== '') w.push(line);
          }
        });
        const end = () => w.close();
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
        resolve(w);
      });
      w.req.on('error', (err) => {
        w.close();
        reject(err);
      });
      w.req.end();
    });
  }

  pause(): void {
    this.res.pause();
  }

  resume(): void {
    this.res.resume();
  }

  abort(): void {
    this.req.destroy();
  }
}

export class WsWatch extends EventLog {
  ws!: WebSocket;
  closeCode = 0;

  static open(url: string, opts: WebSocket.ClientOptions & { protocols?: string[] } = {}): Promise<WsWatch> {
    const w = new WsWatch();
    const { protocols, ...rest } = opts;
    return new Promise((resolve, reject) => {
      w.ws = new WebSocket(url, protocols ?? [], rest);
      w.ws.on('message', (data, isBinary) => {
        if (isBinary) throw new Error('binary message on a JSON watch');
        w.push(data.toString());
      });
      w.ws.on('open', () => resolve(w));
      w.ws.on('close', (code) => {
        w.closeCode = code;
        w.close();
      });
      w.ws.on('error', (err) => {
        w.close();
        reject(err);
      });
    });
  }

  abort(): void {
    this.ws.terminate();
  }
}

/** The answer to an upgrade request that was refused: status line and body. */
export function refusedUpgrade(url: string, opts: WebSocket.ClientOptions & { protocols?: string[] } = {}): Promise<{ status: number; body: string; protocol?: string }> {
  const { protocols, ...rest } = opts;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols ?? [], rest);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('open', () => {
      resolve({ status: 101, body: '', protocol: ws.protocol });
      ws.terminate();
    });
    ws.on('error', (err) => reject(err));
  });
}
