/**
 * The load generator's HTTP client: node:http over keep-alive connections, one per concurrent client,
 * the same for orchd and the bare node:http peer so the two are measured alike. (fetch/undici costs the
 * generator more CPU per request on Node 20, and the generator shares the machine with the server.)
 */
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpReply {
  status: number;
  /** The answer's first `keep` bytes (all of it by default; all of it too when the status is not 2xx). */
  body: Buffer;
  /** Length of the whole answer body, kept or not. */
  bytes: number;
}

export interface RequestOptions {
  contentType?: string;
  /**
   * How many bytes of a 2xx answer's body the caller needs (default: all). The rest is counted and
   * dropped as it arrives, never copied: reassembling an 800 KB list page per request made the
   * generator, not the server, the bottleneck. Answers with other statuses are kept whole for the
   * error message (they are small).
   */
  keep?: number;
}

/** For an https:// server: the CA to trust, a client certificate, the name to check; and headers every request carries (Authorization). */
export interface ClientOptions {
  ca?: string | Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  /** A kubeconfig's insecure-skip-tls-verify. */
  insecure?: boolean;
  headers?: Record<string, string>;
}

export class HttpClient {
  private readonly agent: Agent;
  private readonly url: URL;
  private readonly send: typeof request;

  constructor(
    baseUrl: string,
    connections: number,
    private readonly options: ClientOptions = {},
  ) {
    this.url = new URL(baseUrl);
    const pool = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections };
    const tls = this.url.protocol === 'https:';
    const { ca, cert, key, servername, insecure } = options;
    this.agent = tls
      ? new HttpsAgent({ ...pool, ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}), ...(servername ? { servername } : {}), ...(insecure ? { rejectUnauthorized: false } : {}) })
      : new Agent(pool);
    this.send = tls ? (httpsRequest as typeof request) : request;
  }

  request(method: string, path: string, body?: Buffer, options: RequestOptions = {}): Promise<HttpReply> {
    const { contentType = 'application/json', keep = Infinity } = options;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { accept: 'application/json', ...this.options.headers };
      if (body) {
        headers['content-type'] = contentType;
        headers['content-length'] = body.length;
      }
      const req = this.send({ agent: this.agent, host: this.url.hostname, port: this.url.port, method, path, headers }, (res) => {
        const status = res.statusCode ?? 0;
        const limit = status >= 200 && status < 300 ? keep : Infinity;
        const chunks: Buffer[] = [];
        let kept = 0;
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (kept >= limit) return;
          // A view of the part still wanted, not a copy: the chunk is ours once emitted.
          const part = kept + c.length > limit ? c.subarray(0, limit - kept) : c;
          chunks.push(part);
          kept += part.length;
        });
        res.on('end', () => resolve({ status, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, kept), bytes }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** GET until it answers 200 or the time is up; resolves with the time it took (ms) or rejects. */
export async function waitFor200(url: string, timeoutMs: number, pollMs = 10): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = request(url, { agent: false, timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (ok) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** true when the reply has the status expected; throws with the reply otherwise (the run counts an error). */
export function expectStatus(res: HttpReply, status: number): true {
  if (res.status !== status) throw new Error(`HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
  return true;
}
