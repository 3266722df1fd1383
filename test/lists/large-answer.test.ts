import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { inBatches, startListServer, type ListServer } from './server.js';
import { sleep } from '../helpers/poll.js';

/*
 * A list answer larger than 1 MiB goes out as a stream of its objects' encodings, written as the
 * connection takes them: it must still be one exact JSON document of the announced length, and a
 * client leaving half-way must not hold the server.
 */

let s: ListServer;
const N = 12;
/** 12 namespaces of ~200 KB each: a 2.4 MB list, streamed. */
const filler = (i: number) => `${i}:` + 'abcdefghij"\\\n'.repeat((200 * 1024) / 13);

beforeAll(async () => {
  s = await startListServer();
  await inBatches(
    Array.from({ length: N }, (_, i) => i),
    6,
    async (i) => {
      const r = await call(s.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `big-${i}`, annotations: { filler: filler(i) } } });
      if (r.status !== 201) throw new Error(`create big-${i}: ${r.status} ${r.text.slice(0, 300)}`);
    },
  );
}, 60_000);

afterAll(async () => {
  await s?.cleanup();
});

describe('answers under 1 MiB, joined into reused buffers', () => {
  it('many at once, each exact: a buffer goes back to be reused only once its answer is written', async () => {
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const name = `big-${i % N}`;
          const res = await fetch(`${s.url}/api/v1/namespaces?fieldSelector=metadata.name%3D${name}`);
          const body = Buffer.from(await res.arrayBuffer());
          return { name, length: Number(res.headers.get('content-length')), body };
        }),
      );
      for (const a of answers) {
        expect(a.body.length).toBe(a.length);
        const list = JSON.parse(a.body.toString('utf8'));
        expect(list.items.map((o: any) => [o.metadata.name, o.metadata.annotations.filler])).toEqual([[a.name, filler(Number(a.name.slice(4)))]]);
      }
    }
  });

  it('an answer its client has not read yet is not overwritten by the answers written meanwhile', async () => {
    const url = new URL(s.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.pause();
    await once(socket, 'connect');
    // 800 KB: more than a connection that is not read takes at once.
    socket.write(`GET /api/v1/namespaces?limit=4 HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
    await sleep(200);
    for (let i = 0; i < 3; i++) {
      const other = await call(s.url, 'GET', `/api/v1/namespaces?limit=4&fieldSelector=metadata.name!%3Dbig-${i}`);
      expect(other.status).toBe(200);
    }
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.resume();
    await once(socket, 'end');
    const raw = Buffer.concat(chunks).toString('utf8');
    const list = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(list.items.map((o: any) => [o.metadata.name, o.metadata.annotations.filler])).toEqual(['big-0', 'big-1', 'big-10', 'big-11'].map((n) => [n, filler(Number(n.slice(4)))]));
  });
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
