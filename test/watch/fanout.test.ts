/**
 * Fan-out without HTTP: the server's WatchStreams run watches the server's registry prepares, with in-process sinks. Every
 * watcher of the shared JSON form is handed the very same bytes for an event (encoded once); a
 * WebSocket watcher the same bytes behind a frame header; a watcher that renders its own form
 * (Tables) gets its own; a sink whose peer reads nothing is ended alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { kinds } from '../../src/resources/kinds.js';
import type { WatchSink } from '../../src/http/handlers/watch-sinks.js';
import { DEFAULT_SINK_LIMITS, type WatchSpec } from '../../src/http/handlers/watch-stream.js';
import { createEvent, createNamespace } from './objects.js';
import { eventually } from '../helpers/poll.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
  await createNamespace(srv.url, 'fan');
});
afterAll(async () => srv?.stop());

const eventKind = kinds.find((k) => k.kind === 'Event')!;

/** A sink that keeps what it is sent; its peer takes nothing, so `buffered` counts every byte. */
function captureSink(framing: WatchSink['framing'] = 'line'): WatchSink & { writes: Buffer[][]; ended: boolean } {
  let size = 0;
  const s = {
    framing,
    writes: [] as Buffer[][],
    ended: false,
    write(frames: Buffer[]) {
      s.writes.push(frames);
      for (const f of frames) size += f.length;
    },
    buffered: () => size,
    drained: () => new Promise<void>(() => {}),
    end() {
      s.ended = true;
    },
    onClose() {},
  };
  return s;
}

const spec = (extra: Partial<WatchSpec> = {}): WatchSpec => ({ kind: eventKind, apiVersion: 'events.orch.io/v1', ...extra });

/** The changes after a version: of namespace fan (filed under it in the live index), or of every namespace (scanned). */
const watchAfter = (resourceVersion: number, namespace: string | undefined = 'fan') => srv.api.context.objects.watch(eventKind, namespace, { selectors: {}, resourceVersion, timeoutMs: 60_000 });

const until = (cond: () => boolean) => eventually(cond, { stepMs: 10 });

const ROOMY = { ...DEFAULT_SINK_LIMITS, maxBuffered: Infinity, highWater: Infinity };

describe('fan-out', () => {
  it('hands every JSON watcher the same encoded bytes, a WebSocket watcher a frame header on those bytes, a Table watcher its own', async () => {
    const from = srv.store.appliedSeq;
    const sinks = Array.from({ length: 5 }, () => captureSink());
    const ws = captureSink('websocket');
    const table = captureSink();
    const stops = [
      ...sinks.map((s) => srv.api.context.streams.run(watchAfter(from), spec(), s, ROOMY)),
      srv.api.context.streams.run(watchAfter(from, undefined), spec(), ws, ROOMY),
      srv.api.context.streams.run(watchAfter(from), spec({ render: (o) => ({ kind: 'Table', rows: [{ cells: [o.metadata.name] }] }) }), table, ROOMY),
    ];
    await createEvent(srv.url, 'f1', 'fan');
    await createEvent(srv.url, 'f2', 'fan');
    await until(() => sinks.every((s) => s.writes.length === 2) && table.writes.length === 2 && ws.writes.length === 2);
    for (const i of [0, 1]) {
      for (const s of sinks) expect(s.writes[i][0]).toBe(sinks[0].writes[i][0]);
      // A text frame: FIN + opcode 1, its length, then the very bytes of the JSON line.
      const [header, line] = ws.writes[i];
      expect(line).toBe(sinks[0].writes[i][0]);
      expect(header[0]).toBe(0x81);
      expect(header[1] === 126 ? header.readUInt16BE(2) : header[1]).toBe(line.length);
    }
    expect(table.writes[0][0]).not.toBe(sinks[0].writes[0][0]);
    expect(JSON.parse(table.writes[0][0].toString()).object.kind).toBe('Table');
    for (const stop of stops) stop();
  });

  it('a watcher whose peer takes nothing stops getting live bytes past its bound and is ended, with an ERROR carrying its last version, after the stall timeout', async () => {
    const from = srv.store.appliedSeq;
    const full = captureSink();
    const healthy = captureSink();
    srv.api.context.streams.run(watchAfter(from), spec(), full, { ...DEFAULT_SINK_LIMITS, maxBuffered: 10, highWater: 5, stallTimeoutMs: 400 });
    const stop = srv.api.context.streams.run(watchAfter(from), spec(), healthy, ROOMY);
    const versions = [await createEvent(srv.url, 's1', 'fan'), await createEvent(srv.url, 's2', 'fan'), await createEvent(srv.url, 's3', 'fan')];
    await until(() => full.ended);
    const events = full.writes.flat().map((b) => JSON.parse(b.toString()));
    // One event went out; the next found the peer past its bound, so nothing more was written but the ERROR.
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ERROR']);
    expect(events[1].object).toMatchObject({ kind: 'Status', code: 500, metadata: { resourceVersion: String(versions[0]) } });
    await until(() => healthy.writes.length === 3);
    expect(healthy.ended).toBe(false);
    stop();
  });
});
