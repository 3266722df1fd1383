import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningChildren } from '../../bench/child.js';
import { listReadCosts } from '../../bench/list-memory.js';
import { INITIAL_EVENTS_END } from '../../src/http/handlers/watch-stream.js';
import { LazyObject, peekObject, type StoredObject } from '../../src/store/view.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { builtCli } from '../server/child.js';
import { seedNamespaces } from '../server/seed.js';
import { HttpWatch, WsWatch, type WatchEvent } from './stream.js';
import { tempDir } from '../helpers/temp.js';

/*
 * A streaming list (sendInitialEvents=true) of 100k objects costs the server a small fraction of
 * the memory a plain list of them costs: its objects are encoded one at a time as the client reads,
 * and nothing is cached on them (src/http/handlers/watch-stream.ts, emitInitial), where a plain list encodes its whole
 * answer at once and caches every object's JSON (made straight from the stored bytes, no tree). Each read runs on its own fresh, idle
 * server over the same data (bench/list-memory.ts), so what one read caches neither helps nor
 * burdens the other.
 *
 * Measured on the 2-core dev machine (100k Namespaces, ~300 B of JSON each, 29 MiB as a list), peak
 * RSS growth over the idle server: plain list 98–170 MiB (121 MiB in this test's last run), streaming
 * list 6–9 MiB (9 MiB, in 1.3 s where the plain list took 2.7 s). Before the initial events stopped
 * caching, the streaming list grew by 110–126 MiB, as much as the plain list, and took 5.8 s. Since
 * lists encode from the bytes without decoding (src/log/msgpack-json.ts): plain +82 MiB, streaming
 * +11 MiB, both in 1.4 s; afterwards the plain list's server keeps the 29 MiB of cached JSON. Since
 * answers are joined into reused buffers and the garbage collector no longer decodes every object
 * after a start (which had left the idle server a larger heap to grow into): plain +60–72 MiB,
 * streaming +11–13 MiB (it encodes each object still held as bytes from them, building no tree:
 * before that, +16–70 MiB). Most of what is left is V8's young generation growing under the stream's
 * short-lived lines, so the bound is 30 % of the plain list, not a fraction of its 29 MiB answer.
 */

const OBJECTS = 100_000;
const MIB = 1024 * 1024;

describe('streaming list memory', () => {
  let root: string;
  let cli: string;
  beforeAll(async () => {
    root = tempDir('orchd-streaming-memory-');
    [cli] = await Promise.all([builtCli(), seedNamespaces(join(root, 'log'), OBJECTS)]);
  }, 120_000);

  it('a streaming list of 100k objects grows the server by a small fraction of what a plain list does', async () => {
    // The least of three reads of each kind, each on a fresh server (see listReadCosts).
    const costs = await listReadCosts({ cli, dataDir: root, readyTimeoutMs: 30_000 }, '/api/v1/namespaces', 30_000, 3);
    const plain = costs.find((c) => c.read === 'plain')!;
    const streaming = costs.find((c) => c.read === 'streaming')!;
    expect(runningChildren()).toBe(0);
    const figures = `plain: +${(plain.peakGrowth / MIB).toFixed(1)} MiB peak in ${plain.ms.toFixed(0)} ms; streaming: +${(streaming.peakGrowth / MIB).toFixed(1)} MiB peak in ${streaming.ms.toFixed(0)} ms`;

    // Both delivered every seeded object (and the few the server makes for itself).
    expect(plain.items).toBeGreaterThanOrEqual(OBJECTS);
    expect(streaming.items).toBe(plain.items);
    // The plain list holds at least its 29 MiB answer: the measurement sees memory at this scale.
    expect(plain.peakGrowth, figures).toBeGreaterThan(40 * MIB);
    expect(streaming.peakGrowth, figures).toBeLessThan(plain.peakGrowth * 0.3);
    // And it leaves less behind: no JSON per object stays cached after the stream.
    expect(streaming.retained, figures).toBeLessThan(plain.retained);
  }, 120_000);
});

/*
 * Why it is lean, seen in the view: objects a server restored from its log stay msgpack bytes until
 * something reads them. A streaming list (with or without a selector) reads each one for its line
 * only, so they all stay bytes with no JSON cached; a plain list keeps each one decoded and encoded,
 * which later reads (gets, lists, the next streaming list) reuse.
 */
describe('initial events and the view', () => {
  const COUNT = 300;
  let srv: TestServer;
  beforeAll(async () => {
    const dataDir = tempDir('orchd-initial-events-');
    await seedNamespaces(join(dataDir, 'log'), COUNT);
    srv = await startServer({ dataDir });
  });
  afterAll(async () => {
    await srv?.stop();
    if (srv) await rm(srv.dataDir, { recursive: true, force: true });
  });

  const seeded = () => [...srv.store.view.objects()].filter((s) => /^\/namespaces\/\/seed-/.test(s.key));
  const untouched = (s: StoredObject) => s instanceof LazyObject && !s.isDecoded && s.json === undefined;

  async function streamingList(query = '', over: 'http' | 'websocket' = 'http'): Promise<WatchEvent[]> {
    const path = `/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true${query}`;
    const w = over === 'http' ? await HttpWatch.open(srv.url, path) : await WsWatch.open(srv.url.replace(/^http/, 'ws') + path);
    try {
      return await w.until((e) => e.some((x) => x.type === 'BOOKMARK' && x.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true'), 'the initial-events-end bookmark');
    } finally {
      w.abort();
    }
  }
  const names = (events: WatchEvent[]) => events.filter((e) => e.type === 'ADDED' && e.object.metadata.name.startsWith('seed-')).map((e) => e.object.metadata.name as string);

  it('a streaming list, with or without a selector, over HTTP or a WebSocket, reads every object and leaves each one as bytes with nothing cached', async () => {
    expect(seeded()).toHaveLength(COUNT);
    expect(seeded().every(untouched)).toBe(true);

    const all = await streamingList();
    expect(names(all).sort()).toEqual(
      seeded()
        .map((s) => s.key.slice('/namespaces//'.length))
        .sort(),
    );
    const one = await streamingList('&labelSelector=kubernetes.io/metadata.name=seed-7');
    expect(names(one)).toEqual(['seed-7']);
    expect(names(await streamingList('', 'websocket'))).toHaveLength(COUNT);

    expect(seeded().every(untouched)).toBe(true);
  });

  it('a get answers from the bytes, leaving the object undecoded; a Table of it needs the object', async () => {
    const stored = () => seeded().find((s) => s.key === '/namespaces//seed-11')!;
    expect(untouched(stored())).toBe(true);
    const one = await call(srv.url, 'GET', '/api/v1/namespaces/seed-11');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(peekObject(stored()));
    expect((stored() as LazyObject).isDecoded).toBe(false);
    const table = await call(srv.url, 'GET', '/api/v1/namespaces/seed-11', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect([table.status, table.body.kind]).toEqual([200, 'Table']);
    expect((stored() as LazyObject).isDecoded).toBe(true);
  });

  it('a plain list, by contrast, keeps each object decoded and encoded; a streaming list after it sends that same JSON', async () => {
    const list = await call(srv.url, 'GET', '/api/v1/namespaces');
    expect(list.status).toBe(200);
    expect(seeded().some(untouched)).toBe(false);
    const cached = new Map(seeded().map((s) => [s.key.slice('/namespaces//'.length), s.json!.toString('utf8')]));

    const w = await streamingList();
    for (const line of w) {
      if (line.type !== 'ADDED' || !cached.has(line.object.metadata.name)) continue;
      expect(JSON.stringify(line.object)).toBe(cached.get(line.object.metadata.name));
    }
    expect(names(w)).toHaveLength(COUNT);
  });
});
