/**
 * What node:http's parser refuses is answered with its code and a Status (src/http/raw-requests.ts),
 * on a real node:http server over real sockets. The codes orchd's own server meets are in
 * test/e2e/paths.test.ts; these are the two its defaults make slow to reach: a request whose headers
 * never end (408 once headersTimeout passes) and a chunk extension past node's bound (413).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../src/http/raw-requests.js';
import { socketCall } from '../e2e/support.js';

let server: Server;
let base: string;
beforeAll(async () => {
  // Short timeouts, checked often: the 408 comes in a fraction of a second.
  server = createServer({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 }, (req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('a request node:http cannot parse gets its code with a Status', () => {
  it.each([
    ['headers that never end', 'GET / HTTP/1.1\r\nHost: x\r\n', 408, 'Timeout'],
    ['a chunk extension past 16 KiB', `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(20_000)}\r\na\r\n0\r\n\r\n`, 413, 'RequestEntityTooLarge'],
    ['an unknown method', 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'BadRequest'],
  ])('%s: %i %s', async (_what, request, code, reason) => {
    const r = await socketCall(base, request, 3000);
    expect(r.status, r.text).toBe(code);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: expect.stringMatching(/^malformed HTTP request: /) });
    expect(r.text).toMatch(/\r\nConnection: close\r\n/);
  });
});
