import { get } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, isReady, keepAlive, killAll, request, spawnServer } from './child.js';
import { pathOf, startLoad, untilAcked } from './load.js';
import { expectContiguousLog, expectCreatesOnly, readServed } from './state.js';
import { tempDir } from '../helpers/temp.js';
import { randomInt } from '../helpers/rng.js';
import { sleep } from '../helpers/poll.js';

/*
 * SIGTERM while 16 keep-alive clients are creating: the server stops taking work, finishes what it
 * took, ends the open watches properly, saves a checkpoint and exits 0. Every create that got a 201
 * is there after a restart, and every create that got a refusal is not.
 */

const CLIENTS = 16;

let dataDir: string;
beforeAll(async () => {
  dataDir = tempDir('orchd-server-term-');
  await builtCli();
}, 120_000);
afterAll(async () => {
  await killAll();
});

interface HttpWatch {
  events: { type: string; object: any }[];
  /** Resolves with true if the stream ended with its terminating chunk, false if it was cut. */
  ended: Promise<boolean>;
}

function httpWatch(url: string, path: string): Promise<HttpWatch> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}${path}?watch=true`, (res) => {
      const w: HttpWatch = { events: [], ended: Promise.resolve(false) };
      let partial = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        const parts = (partial + c).split('\n');
        partial = parts.pop() ?? '';
        for (const p of parts) if (p) w.events.push(JSON.parse(p));
      });
      w.ended = new Promise((done) => {
        res.on('end', () => done(res.complete));
        res.on('error', () => done(false));
        res.on('aborted', () => done(false));
      });
      resolve(w);
    });
    req.on('error', reject);
  });
}

function wsWatch(url: string, path: string): Promise<{ closed: Promise<number>; events: unknown[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http:', 'ws:')}${path}?watch=true`);
    const events: unknown[] = [];
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('message', (m) => events.push(JSON.parse(String(m))));
    ws.on('open', () => resolve({ closed, events }));
    ws.on('error', reject);
  });
}

describe('orchd stopped with SIGTERM under load', () => {
  it('answers or refuses each request, keeps every 201, ends the watches and exits 0', async () => {
    const server = await spawnServer(dataDir);
    await server.waitForLine(isReady);
    const watch = await httpWatch(server.url, pathOf('namespace'));
    const ws = await wsWatch(server.url, pathOf('event'));
    const agent = keepAlive(CLIENTS);
    const load = startLoad({ agent, url: server.url, prefix: 'term', clients: CLIENTS, perClient: 2000, maxMs: 15_000 });
    await untilAcked(load, 20);
    await sleep(randomInt(0, 300));
    server.signal('SIGTERM');
    const exit = await server.exited;
    await load.done;
    agent.destroy();
    expect(exit, server.output.stderr).toEqual({ code: 0, signal: null });
    expect(server.lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);

    // The watches were ended by the server, not cut by its death: a final chunk, a close frame.
    expect(await watch.ended).toBe(true);
    // (1006 would be a connection that died without a close frame.)
    expect([1000, 1001]).toContain(await ws.closed);
    // And they saw what was committed while they were open, in order (after the initial state,
    // which comes in key order).
    const live = watch.events.filter((e) => e.object.metadata.name.startsWith('term-'));
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((e) => e.type === 'ADDED')).toBe(true);
    const versions = live.map((e) => Number(e.object.metadata.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));

    // Refusals say why, as a Status; nothing refused was written.
    for (const r of load.refused) expect(r).toMatchObject({ status: 503, reason: 'ServiceUnavailable', message: expect.stringContaining('shutting down') });
    const lastSeq = await expectContiguousLog(join(dataDir, 'log'));

    const again = await spawnServer(dataDir);
    const ready = await again.waitForLine(isReady);
    // The checkpoint written on the way out covers the whole log: nothing to replay.
    expect(ready.seq).toBe(lastSeq);
    expect(again.lines.some((l) => l.msg === 'replaying log')).toBe(false);
    const agent2 = keepAlive(2);
    const served = await readServed(agent2, again.url);
    expectCreatesOnly(served, load.acked);
    for (const r of load.refused) expect(served.objects.has(`${r.kind}/${r.name}`), r.name).toBe(false);
    const next = await request(agent2, again.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-term' } });
    expect(Number(next.body.metadata.resourceVersion)).toBe(lastSeq + 1);
    agent2.destroy();
    again.signal('SIGTERM');
    expect(await again.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('a client that never finishes its request holds the shutdown only until --shutdown-timeout', async () => {
    const server = await spawnServer(join(dataDir, 'stuck'), ['--shutdown-timeout', '1s']);
    await server.waitForLine(isReady);
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    const socketClosed = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (d) => (got += String(d)));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(got));
    });
    // Headers and a promise of 100 bytes of body, of which one ever comes.
    socket.write('POST /api/v1/namespaces HTTP/1.1\r\nHost: orchd\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    // Answered after the stuck request arrived: the server is reading its body now.
    const agent = keepAlive(1);
    expect((await request(agent, server.url, 'GET', '/livez')).status).toBe(200);
    agent.destroy();
    server.signal('SIGTERM');
    expect(await server.exited, server.output.stderr).toEqual({ code: 0, signal: null });
    expect(server.lines.find((l) => l.level === 'warn' && l.msg.includes('shutdown timeout'))).toMatchObject({ timeoutMs: 1000 });
    expect(server.lines.some((l) => l.msg === 'stopped')).toBe(true);
    // Cut without an answer: its create never happened.
    expect(await socketClosed).toBe('');
  }, 60_000);
});
