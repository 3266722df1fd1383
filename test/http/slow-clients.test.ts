import type { Server as HttpServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { arrivalBounds, HEADERS_TIMEOUT_MS } from '../../src/http/slow-clients.js';
import { call, serverForFile } from '../helpers/server.js';
import { HttpWatch } from '../watch/stream.js';
import { eventually, sleep } from '../helpers/poll.js';

/*
 * Slow and idle connections (slowloris): headers must arrive within the header bound and a body
 * within the request timeout, and a few thousand connections trickling their headers from one
 * client must not stop others being served. The bounds are shortened here (2 s and 10 s headers,
 * 3 s request) so the test is quick; the defaults are kube-apiserver's 32 s and 60 s.
 * How long a connection lived is read on the server's side (accepted to closed): the bounds are the
 * server's, and the client's view of them lags by however long its own events wait on a loaded
 * machine (2,000 clients' connect events run after the server has accepted them and started their clocks).
 */

const HEADERS_MS = 2_000;
const REQUEST_MS = 3_000;
/** The slowloris server's header bound: opening 2,000 connections takes seconds on a loaded machine. */
const SLOWLORIS_HEADERS_MS = 10_000;
/** Node checks the bounds once a second: a connection is cut within a second past its bound. */
const CHECK_MS = 1_000;
/** Room for a loaded machine (2 cores shared with other work) past the bound and its check. */
const SLACK_MS = 3_000;
const SLOW_CONNECTIONS = 2_000;

interface Slow {
  socket: Socket;
  /** The client's own port, by which the server's view of the connection is found. */
  port: number;
  closedAt?: number;
  received: string;
}

/** A connection that sends its request line, then one more header line every second, never the blank line. */
function trickle(port: number): Promise<Slow> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const slow: Slow = { socket, port: 0, received: '' };
    let timer: NodeJS.Timeout | undefined;
    socket.write('GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    socket.on('data', (d) => (slow.received += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      slow.closedAt = Date.now();
    });
    socket.once('connect', () => {
      slow.port = socket.localPort!;
      let n = 0;
      timer = setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: a\r\n`), 1_000);
      resolve(slow);
    });
    socket.once('error', reject);
  });
}

/**
 * Each connection as the server saw it, by the client's port: how long from accepted to closed,
 * known once the server has closed it (the server may accept it after the client has connected).
 */
function serverView(http: HttpServer): { lived(clientPort: number): Promise<number>; detach(): void } {
  const connections = new Map<number, { lived: Promise<number>; accepted(closed: Promise<number>): void }>();
  const connection = (port: number) => {
    let c = connections.get(port);
    if (!c) {
      let accepted!: (closed: Promise<number>) => void;
      const lived = new Promise<number>((resolve) => (accepted = resolve));
      connections.set(port, (c = { lived, accepted }));
    }
    return c;
  };
  const onConnection = (socket: Socket) => {
    const acceptedAt = Date.now();
    connection(socket.remotePort!).accepted(new Promise((resolve) => socket.once('close', () => resolve(Date.now() - acceptedAt))));
  };
  http.on('connection', onConnection);
  return { lived: (clientPort) => connection(clientPort).lived, detach: () => void http.off('connection', onConnection) };
}

const waitFor = (what: string, pred: () => boolean, ms: number) => eventually(pred, { timeoutMs: ms, stepMs: 50, what });

describe('a few thousand slow connections', () => {
  const file = serverForFile({ headersTimeoutMs: SLOWLORIS_HEADERS_MS });
  const port = () => Number(new URL(file.base).port);

  it(`${SLOW_CONNECTIONS} connections trickling headers: others are served meanwhile, and each slow one is cut after the header bound`, async () => {
    const slow: Slow[] = [];
    const server = serverView(file.server.api.http);
    try {
      slow.push(...(await Promise.all(Array.from({ length: SLOW_CONNECTIONS }, () => trickle(port())))));
      // A normal client, while every slow one still holds its connection.
      const served = await call(file.base, 'GET', '/version');
      const namespaces = await call(file.base, 'GET', '/api/v1/namespaces');
      const servedAt = Date.now();
      expect(served.status).toBe(200);
      expect(namespaces.status).toBe(200);
      expect(slow.filter((s) => s.closedAt !== undefined && s.closedAt <= servedAt)).toHaveLength(0);
      await waitFor('every slow connection to be cut', () => slow.every((s) => s.closedAt !== undefined), SLOWLORIS_HEADERS_MS + CHECK_MS + SLACK_MS);
      for (const s of slow) {
        const lived = await server.lived(s.port);
        expect(lived).toBeGreaterThanOrEqual(SLOWLORIS_HEADERS_MS - 50);
        expect(lived).toBeLessThan(SLOWLORIS_HEADERS_MS + CHECK_MS + SLACK_MS);
        // Closed without an answer, as kube-apiserver (Go) closes one whose headers never came.
        expect(s.received).toBe('');
      }
      expect((await call(file.base, 'GET', '/version')).status).toBe(200);
    } finally {
      server.detach();
      for (const s of slow) s.socket.destroy();
    }
  }, 60_000);
});

describe('slow clients', () => {
  const file = serverForFile({ headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS });
  const port = () => Number(new URL(file.base).port);

  it('a connection that sends nothing is closed after the header bound', async () => {
    const server = serverView(file.server.api.http);
    try {
      const socket = connect(port(), '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const lived = await server.lived(socket.localPort!);
      expect(lived).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(lived).toBeLessThan(HEADERS_MS + CHECK_MS + SLACK_MS);
    } finally {
      server.detach();
    }
  });

  it('a body that does not arrive within the request timeout is answered 504 Timeout (a Status) and its connection closed', async () => {
    const server = serverView(file.server.api.http);
    const socket = connect(port(), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const clientPort = socket.localPort!;
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    socket.write('POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersion":"v1",');
    const timer = setInterval(() => socket.writable && socket.write(' '), 300);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(timer);
    const lived = await server.lived(clientPort);
    server.detach();
    expect(lived).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(lived).toBeLessThan(REQUEST_MS + CHECK_MS + SLACK_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 504 Gateway Timeout\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within the allotted timeout',
      reason: 'Timeout',
      details: {},
      code: 504,
    });
  }, 20_000);

  it('a watch is not cut by the request timeout: it streams past it and still gets events', async () => {
    const watch = await HttpWatch.open(file.base, '/api/v1/namespaces?watch=true&resourceVersion=0');
    try {
      await sleep(REQUEST_MS + CHECK_MS + 500);
      expect(watch.closed).toBe(false);
      expect((await call(file.base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'late' } })).status).toBe(201);
      await watch.until((es) => es.some((e) => e.object.metadata?.name === 'late'), 'the namespace made after the request timeout');
    } finally {
      watch.abort();
    }
  }, 20_000);
});

describe('arrivalBounds', () => {
  it("defaults to kube-apiserver's 32 s for headers, checked every second; never above the request timeout", () => {
    expect(HEADERS_TIMEOUT_MS).toBe(32_000);
    expect(arrivalBounds(60_000)).toEqual({ requestTimeout: 60_000, headersTimeout: 32_000, connectionsCheckingInterval: 1_000 });
    expect(arrivalBounds(10_000)).toEqual({ requestTimeout: 10_000, headersTimeout: 10_000, connectionsCheckingInterval: 1_000 });
  });
});
