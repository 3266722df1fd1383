import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InflightLimiter } from '../../src/http/inflight.js';
import { anonymousUser } from '../../src/auth/user.js';
import { call, serverForFile } from '../helpers/server.js';
import { HttpWatch } from '../watch/stream.js';
import { keyed } from '../helpers/samples.js';
import { sleep } from '../helpers/poll.js';

/*
 * --max-requests-inflight / --max-mutating-requests-inflight, as kube-apiserver's max-in-flight
 * filter: past the limit a request is answered 429 TooManyRequests with Retry-After: 1 at once;
 * watches are not counted; 0 is no limit.
 */

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

/** A create whose body is only half sent: its handler waits for the rest, holding a mutating slot. */
async function halfSentCreate(url: string, name: string): Promise<{ socket: Socket; finish(): Promise<string> }> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify(ns(name));
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (answer += d));
  socket.write(`POST /api/v1/namespaces HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
  return {
    socket,
    finish() {
      socket.write(body.slice(10));
      return new Promise((resolve) => socket.once('close', () => resolve(answer)));
    },
  };
}

/** Waits until the server counts n mutating requests in flight (its /metrics gauge). */
async function mutatingInFlight(base: string, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const metrics = await call(base, 'GET', '/metrics');
    if (metrics.text.includes(`apiserver_current_inflight_requests{request_kind="mutating"} ${n}`)) return;
    await sleep(25);
  }
  throw new Error(`never ${n} mutating requests in flight`);
}

describe('the max-in-flight limits on a real server (1 read-only, 1 mutating)', () => {
  const file = serverForFile({ inflight: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 } });

  it('a write past the mutating limit gets 429 TooManyRequests with Retry-After: 1; reads are still served; once the slot frees, writes are served again', async () => {
    const held = await halfSentCreate(file.base, 'held');
    await mutatingInFlight(file.base, 1);
    const refused = await call(file.base, 'POST', '/api/v1/namespaces', ns('refused'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Too many requests, please try again later.',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
      code: 429,
    });
    // Refused, not queued: nothing was made.
    expect((await call(file.base, 'GET', '/api/v1/namespaces/refused')).status).toBe(404);
    // A delete is mutating too; a read has a limit of its own.
    expect((await call(file.base, 'DELETE', '/api/v1/namespaces/default')).status).toBe(429);
    expect((await call(file.base, 'GET', '/api/v1/namespaces')).status).toBe(200);
    expect(await held.finish()).toMatch(/^HTTP\/1\.1 201 /);
    await mutatingInFlight(file.base, 0);
    expect((await call(file.base, 'POST', '/api/v1/namespaces', ns('after'))).status).toBe(201);
  });

  it('watches are not counted: three open watches (HTTP and /watch/ path) leave the one read-only slot free', async () => {
    const watches = await Promise.all([
      HttpWatch.open(file.base, '/api/v1/namespaces?watch=true'),
      HttpWatch.open(file.base, '/api/v1/namespaces?watch=1&resourceVersion=0'),
      HttpWatch.open(file.base, '/api/v1/watch/namespaces'),
    ]);
    try {
      expect(watches.map((w) => w.status)).toEqual([200, 200, 200]);
      for (let i = 0; i < 3; i++) expect((await call(file.base, 'GET', '/api/v1/namespaces')).status).toBe(200);
      // Still live: a create reaches them.
      expect((await call(file.base, 'POST', '/api/v1/namespaces', ns('seen'))).status).toBe(201);
      for (const w of watches) await w.until((es) => es.some((e) => e.object.metadata?.name === 'seen'), 'the new namespace');
    } finally {
      for (const w of watches) w.abort();
    }
  });
});

describe('InflightLimiter', () => {
  const attrs = (verb: string, subresource?: string) => ({ verb, isResourceRequest: true, ...(subresource ? { subresource } : {}) });
  const masters = { ...anonymousUser(), username: 'admin', groups: ['system:masters', 'system:authenticated'] };

  it('counts get and list against the read-only limit and every other verb against the mutating one', () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 });
    const user = anonymousUser();
    const get = limiter.admit(attrs('get'), user);
    limiter.admit(attrs('list'), user);
    expect(() => limiter.admit(attrs('get'), user)).toThrow('Too many requests');
    const patch = limiter.admit(attrs('patch'), user);
    for (const verb of ['create', 'update', 'delete', 'deletecollection', 'post']) expect(() => limiter.admit(attrs(verb), user), verb).toThrow('Too many requests');
    patch();
    patch(); // counted out once only
    limiter.admit(attrs('create'), user);
    expect(() => limiter.admit(attrs('create'), user)).toThrow('Too many requests');
    get();
    limiter.admit(attrs('get'), user);
  });

  it('long-running requests (watch, proxy; exec, attach, log, portforward, proxy subresources) are never counted nor refused', () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    const user = anonymousUser();
    limiter.admit(attrs('get'), user);
    limiter.admit(attrs('create'), user);
    for (let i = 0; i < 5; i++) limiter.admit(attrs('watch'), user);
    limiter.admit(attrs('proxy'), user);
    for (const sub of ['exec', 'attach', 'log', 'portforward', 'proxy']) limiter.admit(attrs('create', sub), user);
    expect(() => limiter.admit(attrs('create', 'status'), user)).toThrow('Too many requests');
    expect(keyed(limiter.samples())).toEqual({ 'apiserver_current_inflight_requests{request_kind="readOnly"}': 1, 'apiserver_current_inflight_requests{request_kind="mutating"}': 1 });
  });

  it('a member of system:masters is served past the limit; a limit of 0 is no limit', () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 0 });
    limiter.admit(attrs('get'), anonymousUser());
    expect(() => limiter.admit(attrs('get'), anonymousUser())).toThrow('Too many requests');
    limiter.admit(attrs('get'), masters);
    for (let i = 0; i < 1000; i++) limiter.admit(attrs('create'), anonymousUser());
  });
});
