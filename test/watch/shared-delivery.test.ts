/**
 * A live batch reaches the watchers of one index bucket as one array, made into events and frames
 * once for all of them (store/watch.ts live$ and eventsOf, watch-stream.ts WatchStreams). Checked byte
 * for byte against the general path on a seeded random stream of creates, updates and deletes in
 * mixed batches: every watcher of a namespace must receive exactly the bytes of a watcher of the same
 * namespace that takes the general path (a scan watcher, whose batches are filtered for it, with a
 * selector that matches everything, whose events are its own), over both framings and two versions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { WatchSink } from '../../src/http/handlers/watch-sinks.js';
import { randomBytes } from 'node:crypto';
import { WatchStreams } from '../../src/http/handlers/watch-stream.js';
import { ObjectReads } from '../../src/registry/reads.js';
import { ContinueTokens } from '../../src/store/continue-token.js';
import type { KubeObject } from '../../src/api/types.js';
import type { WatchRoute } from '../../src/store/fanout.js';
import { watch$, type WatchRequest } from '../../src/store/watch.js';
import { Store } from '../../src/store/store.js';
import { widget } from '../helpers/fixture-kinds.js';
import { tempStore } from '../helpers/temp-store.js';
import { rng } from '../helpers/rng.js';

const C = 'test.orch.io/widgets';
const NAMESPACES = ['a', 'b', 'c'];
let log: LevelDbLog;
let store: Store;

beforeAll(async () => {
  ({ log, store } = await tempStore('orchd-shared-delivery-'));
});
afterAll(async () => {
  await store?.close();
  await log?.close();
});

/** A sink that keeps every byte written to it, as the socket would receive them. */
function collecting(framing: WatchSink['framing']): WatchSink & { bytes(): Buffer } {
  const got: Buffer[] = [];
  return {
    framing,
    write: (frames) => got.push(Buffer.concat(frames)),
    buffered: () => 0,
    drained: () => Promise.resolve(),
    end: () => undefined,
    onClose: () => undefined,
    bytes: () => Buffer.concat(got),
  };
}

describe('live batches shared by a bucket of watchers', () => {
  it('give every watcher the bytes the general path gives, on a random stream of mixed batches', async () => {
    const random = rng(26);
    const after = store.appliedSeq;
    const watchers: { ns: string; general: boolean; framing: WatchSink['framing']; apiVersion: string; sink: ReturnType<typeof collecting>; stop: () => void }[] = [];
    const streams = new WatchStreams(new ObjectReads(store, new ContinueTokens(randomBytes(32))));
    const open = (ns: string, general: boolean, framing: WatchSink['framing'], apiVersion: string) => {
      const route: WatchRoute = general ? { by: 'scan' } : { by: 'namespace', namespace: ns };
      const request: Omit<WatchRequest, 'stallTimeoutMs'> = {
        collection: C,
        keyPrefix: `${C}/${ns}/`,
        route,
        after,
        ...(general ? { matches: () => true } : {}),
        initialEventsEnd: false,
        timeoutMs: 600_000,
        current: () => [],
      };
      const sink = collecting(framing);
      watchers.push({ ns, general, framing, apiVersion, sink, stop: streams.run((flow, stallTimeoutMs) => watch$(store, { ...request, stallTimeoutMs }, flow), { kind: widget, apiVersion }, sink) });
    };
    for (const ns of NAMESPACES) {
      for (const framing of ['line', 'websocket'] as const) {
        for (const apiVersion of ['test.orch.io/v1', 'test.orch.io/v2']) {
          open(ns, true, framing, apiVersion);
          for (let i = 0; i < 3; i++) open(ns, false, framing, apiVersion);
        }
      }
    }
    const names = new Map<string, number>();
    for (let round = 0; round < 120; round++) {
      // One batch: the writes of one turn, in random namespaces, some of them to the same key.
      const writes: Promise<unknown>[] = [];
      for (let w = 1 + Math.floor(random() * 5); w > 0; w--) {
        const ns = NAMESPACES[Math.floor(random() * NAMESPACES.length)];
        const name = `w${Math.floor(random() * 12)}`;
        const key = `${C}/${ns}/${name}`;
        const cur = store.latest(key);
        const obj: KubeObject = { apiVersion: 'test.orch.io/v1', kind: 'Widget', metadata: { name, namespace: ns, labels: { r: String(round) } }, spec: { n: random(), s: 'ключ "q"\n' } };
        if (cur && random() < 0.3) writes.push(store.remove(key, cur.obj, { seq: cur.seq }));
        else writes.push(store.put(key, obj, cur ? { seq: cur.seq } : 'absent'));
        names.set(key, (names.get(key) ?? 0) + 1);
      }
      await Promise.all(writes);
    }
    for (const w of watchers) w.stop();
    let compared = 0;
    for (const ns of NAMESPACES) {
      for (const framing of ['line', 'websocket'] as const) {
        for (const apiVersion of ['test.orch.io/v1', 'test.orch.io/v2']) {
          const group = watchers.filter((w) => w.ns === ns && w.framing === framing && w.apiVersion === apiVersion);
          const reference = group.find((w) => w.general)!.sink.bytes();
          expect(reference.length).toBeGreaterThan(1000);
          for (const w of group.filter((x) => !x.general)) {
            expect(w.sink.bytes().equals(reference)).toBe(true);
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(36);
    // The lines are the Kubernetes watch events of the namespace, each object at the watcher's version.
    const lines = watchers
      .find((w) => w.ns === 'a' && w.framing === 'line' && w.apiVersion === 'test.orch.io/v2')!
      .sink.bytes()
      .toString()
      .split('\n')
      .filter((l) => l);
    for (const l of lines) {
      const e = JSON.parse(l) as { type: string; object: KubeObject };
      expect(['ADDED', 'MODIFIED', 'DELETED']).toContain(e.type);
      expect([e.object.apiVersion, e.object.metadata.namespace]).toEqual(['test.orch.io/v2', 'a']);
    }
  });
});
