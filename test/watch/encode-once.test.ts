/**
 * One JSON encoding per version: a watcher encodes a committed object once, and the writer's answer
 * is those same bytes, not a second encoding. Without a watcher nothing is kept on the stored object.
 */
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { Store } from '../../src/store/store.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, event } from './objects.js';
import { tempStore } from '../helpers/temp-store.js';
import { framedBatch } from '../../src/http/handlers/watch-frames.js';

describe('a written version is encoded once, for its watchers and its writer', () => {
  let log: LevelDbLog;
  let store: Store;
  beforeAll(async () => {
    ({ log, store } = await tempStore('orchd-encode-once-'));
  });
  afterAll(async () => {
    await store?.close();
    await log?.close();
  });

  it('the put answers the very bytes a watcher encoded; without a watcher it carries the JSON made while its batch was written, and the view keeps none', async () => {
    const C = 'test.orch.io/things';
    const thing = (name: string) => ({ apiVersion: 'test.orch.io/v1', kind: 'Thing', metadata: { name, namespace: 'ns' }, spec: { n: 1.5, s: 'ключ' } });
    const seen: Buffer[] = [];
    const sub = store.streams.of(C).subscribe((changes) => {
      // As a watcher of the stored version encodes it: once, kept on the change.
      for (const c of changes) seen.push(c.jsonAt('test.orch.io/v1') as Buffer);
    });
    const watched = await store.put(`${C}/ns/a`, thing('a'), 'absent');
    sub.unsubscribe();
    expect(seen).toHaveLength(1);
    expect(watched.json).toBe(seen[0]);
    expect(JSON.parse(seen[0].toString())).toEqual(watched.obj);
    const alone = await store.put(`${C}/ns/b`, thing('b'), 'absent');
    expect(JSON.parse(alone.json!.toString())).toEqual(alone.obj);
    expect(store.get(`${C}/ns/b`)?.json).toBeUndefined();
  });

  it("a framed batch holds the put's answer: the JSON written into it is the change's, and a watcher of another version gets it re-stamped", async () => {
    const C = 'test.orch.io/framed';
    const thing = (name: string) => ({ apiVersion: 'test.orch.io/v1', kind: 'Thing', metadata: { name, namespace: 'ns' }, spec: { s: 'ключ' } });
    const batches: { stored: Buffer; other: Buffer; kept: Buffer | undefined }[] = [];
    const sub = store.streams.of(C).subscribe((changes) => {
      const events = changes.map((change) => ({ type: change.type, change }));
      // The stored version first: the change keeps the JSON it wrote into the batch.
      const stored = framedBatch(events, 'test.orch.io/v1', true).bytes;
      batches.push({ stored, other: framedBatch(events, 'test.orch.io/v2', false).bytes, kept: changes[0].encodedJson });
    });
    const put = await store.put(`${C}/ns/a`, thing('a'), 'absent');
    sub.unsubscribe();
    expect(batches).toHaveLength(1);
    const json = put.json!.toString();
    // The bytes the batch was written from, kept by the change: not a second encoding.
    expect(put.json).toBe(batches[0].kept);
    expect(JSON.parse(json)).toEqual(put.obj);
    const [stored, other] = [batches[0].stored.toString(), batches[0].other.toString()];
    expect(stored).toBe(`${Buffer.byteLength(`{"type":"ADDED","object":${json}}\n`).toString(16)}\r\n{"type":"ADDED","object":${json}}\n\r\n`);
    expect(JSON.parse(other)).toEqual({ type: 'ADDED', object: { ...put.obj, apiVersion: 'test.orch.io/v2' } });
  });
});

describe('over HTTP', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer();
  });
  afterAll(async () => srv?.stop());

  it("a create's answer is byte for byte the object of its ADDED watch event", async () => {
    const listed = await call(srv.url, 'GET', `${EVENTS}/namespaces/default/events`);
    let created = '';
    const body = await new Promise<string>((resolve, reject) => {
      const req = get(`${srv.url}${EVENTS}/namespaces/default/events?watch=true&resourceVersion=${listed.body.metadata.resourceVersion}&timeoutSeconds=2`, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => (text += s));
        res.on('end', () => resolve(text));
        call(srv.url, 'POST', `${EVENTS}/namespaces/default/events`, event('once')).then((r) => {
          expect(r.status).toBe(201);
          created = r.text;
        }, reject);
      });
      req.on('error', reject);
    });
    const lines = body.split('\n').filter((l) => l.length > 0);
    expect(lines).toEqual([`{"type":"ADDED","object":${created}}`]);
  });
});
