/**
 * GETs JSON documents from a token issuer (discovery document, key set) over HTTPS, trusting the
 * configured `certificateAuthority` PEM or, without one, the system's roots, as kube-apiserver's
 * OIDC client does. Bounded in time (30 s, kube's client timeout) and in size. With an agent (the
 * issuer's `egressSelectorType` selection), every connection is dialed through it.
 */
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';

export type GetJson = (url: string) => Promise<unknown>;

const TIMEOUT_MS = 30_000;
/** Discovery documents and key sets are small; a larger answer is refused rather than buffered. */
const MAX_BYTES = 4 * 1024 * 1024;

export function issuerClient(opts: { certificateAuthority?: string; timeoutMs?: number; agent?: HttpsAgent } = {}): GetJson {
  const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
  return (url: string) =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) {
            res.destroy();
            reject(new Error(`${url}: answer larger than ${MAX_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) {
            reject(new Error(`${url}: ${res.statusCode} ${res.statusMessage ?? ''}: ${text.slice(0, 200)}`));
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error(`${url}: answer is not JSON`));
          }
        });
      };
      const headers = { accept: 'application/json' };
      // The egress selection carries HTTPS only; plain HTTP would silently leave the configured path.
      const req =
        u.protocol === 'https:'
          ? httpsRequest(u, { method: 'GET', headers, ...(opts.agent ? { agent: opts.agent } : opts.certificateAuthority ? { ca: opts.certificateAuthority } : {}) }, onResponse)
          : u.protocol === 'http:' && !opts.agent
            ? httpRequest(u, { method: 'GET', headers }, onResponse)
            : undefined;
      if (!req) {
        reject(new Error(`${url}: unsupported scheme ${u.protocol}${opts.agent ? ' (the egress selection carries https only)' : ''}`));
        return;
      }
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${url}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
}
