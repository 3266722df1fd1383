import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { inBatches, startListServer, type ListServer } from './server.js';

/*
 * A list answer larger than 1 MiB goes out as a stream of its objects' encodings, written as the
 * connection takes them: it must still be one exact JSON document of the announced length, and a
 * client leaving half-way must not hold the server.
 */

let s: ListServer;
const N = 12;
/** 12 namespaces of ~200 KB each: a 2.4 MB list, streamed. */
const filler = (i: number) => `${i}:` + 'abcdefghij"\\\n'.repeat(200 * 1024 / 13);

beforeAll(async () => {
  s = await startListServer();
  await inBatches(Array.from({ length: N }, (_, i) => i), 6, async (i) => {
    const r = await call(s.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `big-${i}`, annotations: { filler: filler(i) } } });
    if (r.status !== 201) throw new Error(`create big-${i}: ${r.status} ${r.text.slice(0, 300)}`);
  });
}, 60_000);

afterAll(async () => {
  await s?.cleanup();
});

describe('a list answer larger than 1 MiB', () => {
  it('is one exact JSON document of its Content-Length, every object as a get answers it', async () => {
    const res = await fetch(`${s.url}/api/v1/namespaces`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(body.length).toBeGreaterThan(2 * 2 ** 20);
    expect(Number(res.headers.get('content-length'))).toBe(body.length);
    const list = JSON.parse(body.toString('utf8'));
    expect(list.kind).toBe('NamespaceList');
    const big = list.items.filter((o: any) => o.metadata.name.startsWith('big-'));
    expect(big.map((o: any) => o.metadata.name).sort()).toEqual(Array.from({ length: N }, (_, i) => `big-${i}`).sort());
    for (const o of big) {
      const one = await call(s.url, 'GET', `/api/v1/namespaces/${o.metadata.name}`);
      expect(o).toEqual(one.body);
      expect(o.metadata.annotations.filler).toBe(filler(Number(o.metadata.name.slice(4))));
    }
  });

  it('a client that leaves after the first bytes does not hold the server', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request(`${s.url}/api/v1/namespaces`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
      req.end();
    });
    const again = await call(s.url, 'GET', '/api/v1/namespaces?limit=1');
    expect(again.status).toBe(200);
    const whole = await call(s.url, 'GET', '/api/v1/namespaces');
    expect(whole.body.items.length).toBeGreaterThanOrEqual(N);
  });
});
