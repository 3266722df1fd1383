/**
 * Fan-out without HTTP: runWatch against the server's real store with in-process sinks. Every
 * watcher of the shared JSON form is handed the very same bytes for an event (encoded once); a
 * watcher that renders its own form (Tables) gets its own; a full sink is dropped alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { kinds } from '../../src/resources/registry.js';
import { runWatch, type WatchSink, type WatchSpec } from '../../src/http/handlers/watch-stream.js';
import { createEvent, createNamespace } from './objects.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
  await createNamespace(srv.url, 'fan');
});
afterAll(async () => srv?.stop());

const eventKind = kinds.find((k) => k.kind === 'Event')!;

/** A sink that keeps what it is sent; `room` bytes before it reports itself full. */
function captureSink(room = Infinity): WatchSink & { lines: Buffer[]; ended: boolean } {
  let size = 0;
  const s = {
    lines: [] as Buffer[],
    ended: false,
    send(line: Buffer) {
      s.lines.push(line);
      size += line.length;
      return size <= room;
    },
    needsDrain: () => false,
    drained: () => Promise.resolve(),
    end() {
      s.ended = true;
    },
    onClose() {},
  };
  return s;
}

const spec = (after: number, extra: Partial<WatchSpec> = {}): WatchSpec => ({
  kind: eventKind,
  apiVersion: 'events.orch.io/v1',
  keyPrefix: 'events.orch.io/events/fan/',
  after,
  initialEventsEnd: false,
  bookmarks: false,
  bookmarkIntervalMs: 60_000,
  timeoutMs: 60_000,
  current: () => [],
  ...extra,
});

const until = async (cond: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
};

describe('fan-out', () => {
  it('hands every JSON watcher the same encoded bytes; a Table watcher its own; a full one is dropped alone', async () => {
    const store = srv.api.context.objects.store;
    const from = store.appliedSeq;
    const sinks = Array.from({ length: 5 }, () => captureSink());
    const table = captureSink();
    const tiny = captureSink(10);
    const stops = [
      ...sinks.map((s) => runWatch(store, spec(from), s)),
      runWatch(store, spec(from, { render: (o) => ({ kind: 'Table', rows: [{ cells: [o.metadata.name] }] }) }), table),
      runWatch(store, spec(from), tiny),
    ];
    await createEvent(srv.url, 'f1', 'fan');
    await createEvent(srv.url, 'f2', 'fan');
    await until(() => sinks.every((s) => s.lines.length === 2) && table.lines.length === 2);
    for (const i of [0, 1]) for (const s of sinks) expect(s.lines[i]).toBe(sinks[0].lines[i]);
    expect(table.lines[0]).not.toBe(sinks[0].lines[0]);
    expect(JSON.parse(table.lines[0].toString()).object.kind).toBe('Table');
    // The tiny sink took one event, reported full, got the ERROR and was ended; the others go on.
    expect(tiny.ended).toBe(true);
    expect(tiny.lines.map((l) => JSON.parse(l.toString()).type)).toEqual(['ADDED', 'ERROR']);
    expect(sinks.every((s) => !s.ended)).toBe(true);
    for (const stop of stops) stop();
  });
});
