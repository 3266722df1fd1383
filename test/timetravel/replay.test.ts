import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { loadServerConfig } from '../../src/config/server-config.js';
import type { ReplayReport } from '../../src/timetravel/replay/loop.js';
import type { Speed } from '../../src/timetravel/replay/pacing.js';
import { eventsConfig, keyed, secret } from '../encryption/helpers.js';
import { folderContents } from '../helpers/folder-contents.js';
import { eventually } from '../helpers/poll.js';
import { call, startServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { HttpWatch } from '../watch/stream.js';
import { eventInformer, run, startReplayOf } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

/*
 * A real run is recorded (an orchd with a data folder, written to over HTTP in three steps about a
 * second apart, while two watches look on), then replayed with the tool: watches on the replay server
 * must see what the watches on the recorded run saw, event for event, with the same resourceVersions.
 */

const WATCHED = [`${EVENTS}/events`, '/api/v1/namespaces'];
const NS = 'replay-a';

const watchFrom = (base: string, path: string, rv: number) => HttpWatch.open(base, `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`);

/** The changes a watch saw up to version rv (a bookmark tells it got there with nothing more to see). */
async function seenUpTo(w: HttpWatch, rv: number): Promise<string[]> {
  await w.until((evs) => evs.some((e) => Number(e.object?.metadata?.resourceVersion) >= rv), `version ${rv}`);
  return w.changes().map((e) => `${e.type} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
}

async function namespaces(base: string): Promise<string[]> {
  const r = await call(base, 'GET', '/api/v1/namespaces');
  return r.body.items.map((n: any) => `${n.metadata.name} ${n.metadata.resourceVersion}`);
}

let recording: string;
/** The recorded run's version before the writes below: the replay starts after it. */
let initial: number;
let last: number;
let wallMs: number;
let recorded: string[][];
let finalNamespaces: string[];
let recordingPrint: Buffer;

beforeAll(async () => {
  recording = tempDir('orchd-recording-');
  const server = await startServer({ dataDir: recording, bookmarkIntervalMs: 100 });
  const base = server.url;
  const watches: HttpWatch[] = [];
  try {
    initial = Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    watches.push(...(await Promise.all(WATCHED.map((p) => watchFrom(base, p, initial)))));
    const started = performance.now();
    await createNamespace(base, NS);
    await createEvent(base, 'e1', NS);
    await createEvent(base, 'e2', NS);
    await sleep(1100);
    await labelEvent(base, 'e1', { step: '2' }, NS);
    await createEvent(base, 'e3', NS);
    await createNamespace(base, 'replay-b');
    await sleep(1100);
    // Deletes carry no time of their own (src/timetravel/replay/pacing.ts): a create stamps the last step.
    await createEvent(base, 'e4', NS);
    expect((await call(base, 'DELETE', `${EVENTS}/namespaces/${NS}/events/e2`)).status).toBe(200);
    expect((await call(base, 'DELETE', '/api/v1/namespaces/replay-b')).status).toBe(200);
    // The namespace controller finishes the deletion: its writes are part of the recording too.
    for (let i = 0; i < 100 && (await call(base, 'GET', '/api/v1/namespaces/replay-b')).status !== 404; i++) await sleep(50);
    wallMs = performance.now() - started;
    last = Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    recorded = await Promise.all(watches.map((w) => seenUpTo(w, last)));
    finalNamespaces = await namespaces(base);
  } finally {
    for (const w of watches) w.abort();
    await server.stop();
  }
  recordingPrint = await folderContents(recording);
});

/** Replays the recording after `initial` to two watches opened at the replay's initial version. */
async function replay(speed: Speed) {
  const r = await startReplayOf({ 'data-dir': recording }, { speed, from: initial + 1, watchers: WATCHED.length, bookmarkIntervalMs: 100 });
  const watches: HttpWatch[] = [];
  try {
    expect(r.initialVersion).toBe(initial);
    watches.push(...(await Promise.all(WATCHED.map((p) => watchFrom(r.url, p, r.initialVersion)))));
    await Promise.race(watches.map((w) => w.until((evs) => evs.some((e) => e.type !== 'BOOKMARK'), 'a first change')));
    const firstSeen = performance.now();
    const report: ReplayReport = await r.done;
    const seen = await Promise.all(watches.map((w) => seenUpTo(w, last)));
    const lastSeen = performance.now();
    return { r, report, seen, arrivalSpanMs: lastSeen - firstSeen, finalNamespaces: await namespaces(r.url), post: await call(r.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'late' } }) };
  } finally {
    for (const w of watches) w.abort();
    await r.close();
  }
}

describe('tools/replay', () => {
  it('the recording holds the run: events and namespace changes, deletes and the controller’s writes', () => {
    expect(recorded[0]).toEqual(expect.arrayContaining([`ADDED ${NS}/e1 ${initial + 2}`, expect.stringMatching(/^MODIFIED replay-a\/e1 /), expect.stringMatching(/^DELETED replay-a\/e2 /)]));
    expect(recorded[1]).toEqual(expect.arrayContaining([`ADDED /${NS} ${initial + 1}`, expect.stringMatching(/^DELETED \/replay-b /)]));
  });

  it('at max speed, watchers see the recorded sequence with the recorded resourceVersions, and nothing else', async () => {
    const { r, report, seen, finalNamespaces: ns, post } = await replay('max');
    expect(seen).toEqual(recorded);
    expect(ns).toEqual(finalNamespaces);
    expect([r.from, r.to]).toEqual([initial + 1, last]);
    expect(report.entries).toBe(last - initial);
    // The stamped times are a second apart at least twice; max waits for none of them, so the run is
    // shorter than the span it replays (how fast it is: the replay bench).
    expect(report.recordedSpanMs).toBeGreaterThanOrEqual(2000);
    expect(report.durationMs).toBeLessThan(report.recordedSpanMs);
    expect(report.entriesPerSecond).toBeCloseTo((report.entries * 1000) / report.durationMs, 6);
    // Read-only: a controller's write would put something into the stream that the recording lacks.
    expect(post.status).toBe(403);
    expect(post.body.message).toContain('only get, list and watch');
  });

  it("serves the recorded commit times: its /debug/log and its timeline are the recording's, not the replay's clock", async () => {
    const r = await startReplayOf({ 'data-dir': recording }, { speed: 'max', from: initial + 1 });
    try {
      await r.done;
      const served = (await call(r.url, 'GET', `/debug/log?from=${initial + 1}`)).text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const source = (await run('log', '--data-dir', recording, '-o', 'json', '--from', String(initial + 1))).out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(served.map((l) => [l.rv, l.time])).toEqual(source.map((l) => [Number(l.resourceVersion), Date.parse(l.time)]));
      const timeline = (await call(r.url, 'GET', '/debug/timeline/writes?buckets=10')).body;
      expect(timeline.timesFromLog).toBe(true);
      expect(timeline.buckets[0].start).toBe(Date.parse(source[0].time));
      // Written in three steps a second apart: the writes fall in more than one bucket.
      expect(timeline.buckets.filter((b: { counts: object }) => Object.keys(b.counts).length > 0).length).toBeGreaterThan(1);
    } finally {
      await r.close();
    }
  });

  it('at 10x, the same sequence, spread over about a tenth of the recorded span', async () => {
    const { report, seen, arrivalSpanMs } = await replay(10);
    expect(seen).toEqual(recorded);
    expect(report.entries).toBe(last - initial);
    // Times are stamped to the second: the span is within a second of the run's own.
    expect(report.recordedSpanMs).toBeGreaterThanOrEqual(2000);
    expect(report.recordedSpanMs).toBeLessThanOrEqual(wallMs + 1000);
    const tenth = report.recordedSpanMs / 10;
    expect(report.durationMs).toBeGreaterThanOrEqual(tenth - 20);
    expect(report.durationMs).toBeLessThan(tenth + 3000);
    expect(arrivalSpanMs).toBeGreaterThanOrEqual(tenth * 0.7);
  });

  it('an @kubernetes/client-node informer lists, then follows the replayed Events as they were recorded', async () => {
    const r = await startReplayOf({ 'data-dir': recording }, { speed: 10, from: initial + 1, watchers: 1 });
    const { informer, seen, errors } = eventInformer(r.url, NS);
    const expected = recorded[0].filter((line) => line.includes(` ${NS}/`));
    try {
      await informer.start();
      await r.done;
      for (let i = 0; i < 150 && seen.length < expected.length; i++) await sleep(100);
      expect(seen).toEqual(expected);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
      await r.close();
    }
  });

  it('at a fork, every watch ends with 410 Expired, and a client-node informer lists again (no error, no restart)', async () => {
    const r = await startReplayOf({ 'data-dir': recording }, { speed: 'max', from: initial + 1 });
    const { informer, errors } = eventInformer(r.url, NS);
    let lists = 0;
    informer.on('connect', () => lists++);
    try {
      await r.done;
      const watch = await watchFrom(r.url, `${EVENTS}/namespaces/${NS}/events`, r.to);
      await informer.start();
      await eventually(() => r.control.status().at === r.to && lists >= 1, { what: 'the informer watching' });
      const before = lists;
      r.expireWatches(`the replay was forked at resourceVersion ${r.to}: list again`);
      const events = await watch.until((evs) => evs.some((e) => e.type === 'ERROR'), 'the ERROR event');
      expect(events.at(-1)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: `the replay was forked at resourceVersion ${r.to}: list again` } });
      await eventually(() => watch.closed, { what: 'the watch ended' });
      // The informer's own watch got the same: it lists again and watches on, as on any 410.
      await eventually(() => lists > before, { what: 'the informer listing again' });
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
      await r.close();
    }
  });

  it('by default from the recording’s first entry: the server’s own start-up writes are replayed, not made again', async () => {
    const r = await startReplayOf({ 'data-dir': recording }, { speed: 'max' });
    try {
      expect([r.initialVersion, r.from, r.to]).toEqual([0, 1, last]);
      expect((await r.done).entries).toBe(last);
      expect(await namespaces(r.url)).toEqual(finalNamespaces);
    } finally {
      await r.close();
    }
  });

  it('the command replays a range and prints its figures', async () => {
    const r = await run('replay', '--data-dir', recording, '--speed', 'max', '--from', String(initial + 1), '--to', String(initial + 3));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^serving http://127\\.0\\.0\\.1:\\d+: the state at resourceVersion ${initial}, then entries ${initial + 1}\\.\\.${initial + 3}\n`));
    expect(r.out).toMatch(new RegExp(`replayed 3 entries \\(seq ${initial + 1}\\.\\.${initial + 3}\\) at speed max in [\\d.]+ s: \\d+ entries/s \\(recorded span \\d+ s\\)\n$`));
  });

  describe('bad input is refused with a clear error', () => {
    let empty: string;
    beforeAll(async () => {
      empty = tempDir('orchd-empty-');
      const log = new LevelDbLog({ path: join(empty, 'log') });
      await log.open();
      await log.close();
    });

    it.each([
      ['no source', () => [], 2, () => /^orchd replay: give exactly one source: a RECORDING \(or --file\) or --data-dir$/],
      ['a folder with no log', () => ['--data-dir', join(tmpdir(), 'orchd-no-such-folder')], 1, () => /no orchd log there/],
      ['an empty log', () => ['--data-dir', empty], 1, () => /the recording holds no log entries/],
      ['a bad speed', () => ['--data-dir', recording, '--speed', 'fast'], 2, () => /--speed: must be a positive number or max, not "fast"/],
      ['a bad --from', () => ['--data-dir', recording, '--from', 'x'], 2, () => /--from: must be a whole number of at least 1/],
      ['--to past the end', () => ['--data-dir', recording, '--to', String(last + 1)], 1, () => new RegExp(`--to ${last + 1}: the recording ends at ${last}`)],
      ['--from after --to', () => ['--data-dir', recording, '--from', String(initial + 3), '--to', String(initial + 2)], 1, () => /is after --to/],
      ['an unknown flag', () => ['--data-dir', recording, '--fast'], 2, () => /Unknown option '--fast'/],
      ['a port out of range', () => ['--data-dir', recording, '--port', '70000'], 2, () => /--port: "70000" is not a port number \(0-65535\)/],
    ])('%s', async (_name, args, code, error) => {
      const r = await run('replay', ...args());
      expect(r.code).toBe(code);
      expect(r.err.split('\n')[0]).toMatch(error());
      expect(r.err.trim().split('\n')).toHaveLength(code === 2 ? 2 : 1);
    });
  });

  describe('a recording encrypted at rest', () => {
    let dir: string;
    let file: string;
    let lastSealed: number;
    beforeAll(async () => {
      dir = tempDir('orchd-sealed-');
      file = join(dir, 'enc.yaml');
      await writeFile(file, eventsConfig(keyed('aesgcm', ['k1', secret()])));
      const loaded = loadServerConfig({ encryption: file });
      if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
      const server = await startServer({ dataDir: join(dir, 'data'), config: loaded.config });
      try {
        await createEvent(server.url, 'sealed-1');
        lastSealed = await createEvent(server.url, 'sealed-2');
      } finally {
        await server.stop();
      }
    });

    it('is replayed with the configuration it was written with', async () => {
      const r = await startReplayOf({ 'data-dir': join(dir, 'data'), 'encryption-provider-config': file }, { speed: 'max' });
      try {
        expect((await r.done).entries).toBe(lastSealed);
        const got = await call(r.url, 'GET', `${EVENTS}/namespaces/default/events/sealed-2`);
        expect([got.status, got.body.note, got.body.metadata.resourceVersion]).toEqual([200, 'hello', String(lastSealed)]);
      } finally {
        await r.close();
      }
      const ran = await run('replay', '--data-dir', join(dir, 'data'), '--speed', 'max', '--encryption-provider-config', file);
      expect(ran.code).toBe(0);
      expect(ran.out).toContain(`replayed ${lastSealed} entries`);
    });

    it.each([
      ['in the replayed entries', () => [] as string[]],
      ['in the state before --from', () => ['--from', String(lastSealed)]],
    ])('without it, an entry no key opens stops the replay with an error naming it (%s)', async (_name, extra) => {
      const r = await run('replay', '--data-dir', join(dir, 'data'), '--speed', 'max', ...extra());
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^orchd replay: log entry \d+ \(events\.orch\.io\/events\/default\/sealed-1\) cannot be read: .* needs the --encryption-provider-config it was written with\n$/);
    });
  });

  it('leaves the recording as it was', async () => {
    // Its entries and files; LevelDB's own bookkeeping is rewritten by any open of the log.
    expect((await folderContents(recording)).equals(recordingPrint)).toBe(true);
  });
});
