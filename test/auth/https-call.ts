/** An HTTPS request that trusts a given CA (fetch cannot be given one): JSON in and out. */
import { request } from 'node:https';

export interface HttpsReply {
  status: number;
  body: any;
  text: string;
}

export function httpsCall(base: string, ca: string | Buffer, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(new URL(path, base), { method, ca, headers: { ...headers, ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    req.on('error', reject);
    req.end(data);
  });
}
