/**
 * A watch's bytes on the wire, read from a raw socket: over HTTP/1.1 each batch of events is one
 * well-formed chunk and the stream ends with the last chunk; an HTTP/1.0 peer, which cannot take
 * chunks, gets the bare JSON lines and the end of the connection.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { createEvent, createNamespace, EVENTS } from './objects.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
  await createNamespace(srv.url, 'wire');
});
afterAll(async () => srv?.stop());

/** Sends a raw request and resolves with everything the server sends until it closes the connection. */
function rawWatch(request: string, whileOpen: () => Promise<void>): Promise<Buffer> {
  const { hostname, port } = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let headersSeen = false;
    socket.on('data', (b) => {
      chunks.push(b);
      if (!headersSeen && Buffer.concat(chunks).includes('\r\n\r\n')) {
        headersSeen = true;
        whileOpen().catch(reject);
      }
    });
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(new Error('watch did not end')), 15_000).unref();
  });
}

/** The chunks of a chunked body, each as its bytes; throws on a malformed one. */
function dechunk(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; ;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) throw new Error(`no chunk size at ${at}`);
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    expect(Number.isNaN(size)).toBe(false);
    if (size === 0) {
      expect(body.subarray(eol).toString('latin1')).toBe('\r\n\r\n');
      return out;
    }
    out.push(body.subarray(eol + 2, eol + 2 + size));
    expect(body.subarray(eol + 2 + size, eol + 4 + size).toString('latin1')).toBe('\r\n');
    at = eol + 4 + size;
  }
}

const names = (lines: string[]) => lines.map((l) => JSON.parse(l)).map((e) => `${e.type} ${e.object.metadata.name}`);

describe('watch framing on the wire', () => {
  const path = (rv: number) => `${EVENTS}/namespaces/wire/events?watch=true&resourceVersion=${rv}&timeoutSeconds=2`;

  it('HTTP/1.1: each batch is one chunk of whole JSON lines, and the stream ends with the last chunk', async () => {
    const rv = await createEvent(srv.url, 'before-11', 'wire');
    const raw = await rawWatch(`GET ${path(rv)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, async () => {
      await createEvent(srv.url, 'a-11', 'wire');
      // Several at once, so that some arrive in one commit batch.
      await Promise.all(['b', 'c', 'd', 'e'].map((n) => createEvent(srv.url, `${n}-11`, 'wire')));
    });
    const split = raw.indexOf('\r\n\r\n');
    expect(raw.subarray(0, split).toString()).toMatch(/transfer-encoding: chunked/i);
    const chunks = dechunk(raw.subarray(split + 4));
    for (const c of chunks) expect(c.toString().endsWith('\n')).toBe(true);
    const lines = chunks.flatMap((c) => c.toString().split('\n').filter(Boolean));
    expect(names(lines).sort()).toEqual(['ADDED a-11', 'ADDED b-11', 'ADDED c-11', 'ADDED d-11', 'ADDED e-11']);
    expect(names(lines)[0]).toBe('ADDED a-11');
  });

  it('HTTP/1.0: bare JSON lines, ended by closing the connection', async () => {
    const rv = await createEvent(srv.url, 'before-10', 'wire');
    const raw = await rawWatch(`GET ${path(rv)} HTTP/1.0\r\nHost: x\r\n\r\n`, async () => {
      await createEvent(srv.url, 'a-10', 'wire');
      await createEvent(srv.url, 'b-10', 'wire');
    });
    const split = raw.indexOf('\r\n\r\n');
    expect(raw.subarray(0, split).toString()).not.toMatch(/transfer-encoding/i);
    const lines = raw
      .subarray(split + 4)
      .toString()
      .split('\n');
    expect(lines.pop()).toBe('');
    expect(names(lines)).toEqual(['ADDED a-10', 'ADDED b-10']);
  });
});
