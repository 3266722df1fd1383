/**
 * The load generator's HTTP client: node:http over keep-alive connections, one per concurrent client,
 * the same for orchd and the bare node:http peer so the two are measured alike. (fetch/undici costs the
 * generator more CPU per request on Node 20, and the generator shares the machine with the server.)
 */
import { Agent, request } from 'node:http';

export interface HttpReply {
  status: number;
  body: Buffer;
}

export class HttpClient {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(baseUrl: string, connections: number) {
    this.url = new URL(baseUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  request(method: string, path: string, body?: Buffer, contentType = 'application/json'): Promise<HttpReply> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { accept: 'application/json' };
      if (body) {
        headers['content-type'] = contentType;
        headers['content-length'] = body.length;
      }
      const req = request({ agent: this.agent, host: this.url.hostname, port: this.url.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
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
