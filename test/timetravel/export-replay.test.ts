import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc32 } from 'node:zlib';
import { packJson } from '../../src/log/codec.js';
import { MAGIC, frame, type Recording } from '../../src/timetravel/recording/format.js';
import { ENTRIES, PageWriter, STATE } from '../../src/timetravel/recording/pages.js';
import { readRecording } from '../../src/timetravel/recording/read.js';
import { serveControl } from '../../src/timetravel/replay/control.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { eventInformer, run, startReplayOf } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

/*
 * A real run is exported (from its data folder while it runs, and from its API) and the recording
 * replayed: a client-node informer on the replay sees every recorded event in order with the recorded
 * resourceVersions; the controls pause, step and jump; a damaged recording is refused in one line.
 */

const NS = 'rec-a';
let server: TestServer;
let work: string;
let dataDir: string;
let file: string;
let initial: number;
let rec: Recording;

beforeAll(async () => {
  work = tempDir('orchd-export-');
  dataDir = join(work, 'data');
  server = await startServer({ dataDir });
  const base = server.url;
  initial = Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
  await createNamespace(base, NS);
  for (let i = 0; i < 6; i++) await createEvent(base, `e${i}`, NS);
  await labelEvent(base, 'e1', { step: '2' }, NS);
  expect((await call(base, 'DELETE', `${EVENTS}/namespaces/${NS}/events/e2`)).status).toBe(200);
  await createEvent(base, 'e9', NS);
  file = join(work, 'incident.orchlog');
  const r = await run('export', '--data-dir', dataDir, '--from', String(initial), '--file', file);
  expect(r.code).toBe(0);
  // Not a terminal: no progress bar, only the one line saying what was written.
  expect(r.err).toMatch(/^orchd export: the state at \d+ and \d+ entries to \d+ written to \S+incident\.orchlog\n$/);
  rec = await readRecording(file);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('orchd export', () => {
  it('writes the state at --from as one snapshot, then every entry to the head, with commit times', async () => {
    const head = Number((await call(server.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    expect(rec.header).toMatchObject({ format: 2, from: initial, to: head, timesFromLog: true });
    expect(rec.entries.map((e) => e.rv)).toEqual(Array.from({ length: head - initial }, (_, i) => initial + 1 + i));
    expect(rec.entries.every((e) => typeof e.time === 'number')).toBe(true);
    const namespaces = (await call(server.url, 'GET', `/api/v1/namespaces?resourceVersion=${initial}&resourceVersionMatch=Exact`)).body.items.map((n: any) => n.metadata.name);
    expect(rec.snapshot.filter(([key]) => key.startsWith('/namespaces/')).map(([, o]) => o.metadata.name)).toEqual(namespaces);
    expect(rec.entries.find((e) => e.type === 'delete')).toMatchObject({ key: `events.orch.io/events/${NS}/e2` });
  });

  it('from the server, the same snapshot and entries, commit times included', async () => {
    const other = join(work, 'from-api.orchlog');
    expect((await run('export', '--server', server.url, '--from', String(initial), '--to', String(rec.header.to), '--file', other)).code).toBe(0);
    const api = await readRecording(other);
    expect({ snapshot: api.snapshot, entries: api.entries }).toEqual({ snapshot: rec.snapshot, entries: rec.entries });
    expect(api.header.timesFromLog).toBe(true);
  });
});

describe('orchd replay of a recording', () => {
  it('an @kubernetes/client-node informer sees every recorded event in order with the recorded resourceVersions', async () => {
    const r = await startReplayOf({ file }, { speed: 'max', watchers: 1 });
    expect(r.initialVersion).toBe(initial);
    const { informer, seen, errors } = eventInformer(r.url, NS);
    const names = new Set<string>();
    const expected = rec.entries
      .filter((e) => e.key.startsWith(`events.orch.io/events/${NS}/`))
      .map((e) => {
        const type = e.type === 'delete' ? 'DELETED' : names.has(e.object.metadata.name!) ? 'MODIFIED' : 'ADDED';
        names.add(e.object.metadata.name!);
        return `${type} ${NS}/${e.object.metadata.name} ${e.rv}`;
      });
    expect(expected).toHaveLength(9);
    try {
      await informer.start();
      await r.done;
      for (let i = 0; i < 150 && seen.length < expected.length; i++) await sleep(100);
      expect(seen).toEqual(expected);
      expect(errors).toEqual([]);
      // The served state at the recording's start is the recorded one, at its versions.
      const at = await call(r.url, 'GET', `/api/v1/namespaces?resourceVersion=${initial}&resourceVersionMatch=Exact`);
      expect(at.body.items.map((n: any) => `${n.metadata.name} ${n.metadata.resourceVersion}`)).toEqual(
        rec.snapshot.filter(([key]) => key.startsWith('/namespaces/')).map(([, o]) => `${o.metadata.name} ${o.metadata.resourceVersion}`),
      );
    } finally {
      await informer.stop();
      await r.close();
    }
  }, 60_000);

  it('pauses at --pause-at, steps one entry, jumps to a version, resumes: over the control endpoint', async () => {
    const r = await startReplayOf({ file }, { speed: 'max', pauseAt: initial + 2 });
    const controls = await serveControl(r.control, 0);
    const post = async (path: string) => {
      const res = await fetch(controls.url + path, { method: 'POST' });
      expect(res.status).toBe(200);
      return res.json();
    };
    const head = async () => Number((await call(r.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    const until = async (rv: number) => {
      for (let i = 0; i < 100 && (await head()) < rv; i++) await sleep(20);
      return head();
    };
    try {
      expect(await until(initial + 2)).toBe(initial + 2);
      await sleep(200);
      expect(await head()).toBe(initial + 2);
      const entryAt = (rv: number) => new Date(rec.entries.find((e) => e.rv === rv)!.time!).toISOString();
      expect(await (await fetch(`${controls.url}/status`)).json()).toEqual({
        paused: true,
        at: initial + 2,
        end: rec.header.to,
        jumpTo: 0,
        pauseAt: null,
        speed: 'max',
        recordedTime: entryAt(initial + 2),
      });
      // A step answers once its entry is sent, with where the replay is then.
      expect(await post('/step')).toMatchObject({ paused: true, at: initial + 3, recordedTime: entryAt(initial + 3) });
      expect(await head()).toBe(initial + 3);
      const refused = async (path: string, reason: string) => {
        const res = await fetch(controls.url + path, { method: 'POST' });
        expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([400, reason]);
      };
      await refused(`/jump?to=${initial + 1}`, `/jump?to=${initial + 1}: the replay is at ${initial + 3}: it goes forward only`);
      await refused(`/jump?to=${rec.header.to + 1}`, `/jump?to=${rec.header.to + 1}: past the end: the replay ends at ${rec.header.to}`);
      await sleep(200);
      expect(await head()).toBe(initial + 3);
      expect((await fetch(`${controls.url}/jump?to=soon`, { method: 'POST' })).status).toBe(400);
      await post(`/jump?to=${initial + 6}`);
      expect(await until(initial + 6)).toBe(initial + 6);
      await sleep(200);
      expect(await head()).toBe(initial + 6);
      await post('/resume');
      expect((await r.done).to).toBe(rec.header.to);
      await refused('/step', 'not paused: a step goes one entry at a time from a pause');
    } finally {
      await controls.close();
      await r.close();
    }
  });
});

describe('orchd replay refuses at start', () => {
  it('--pause-at at or past the end, or a time: one line, exit 1; a time is resolved and said', async () => {
    const past = await run('replay', file, '--speed', 'max', '--pause-at', String(rec.header.to));
    expect([past.code, past.err]).toEqual([1, `orchd replay: --pause-at ${rec.header.to}: the replay ends at ${rec.header.to}: it would never pause\n`]);
    const later = await run('replay', file, '--pause-at', new Date(rec.entries[rec.entries.length - 1].time! + 60_000).toISOString());
    expect(later.code).toBe(1);
    expect(later.err).toMatch(/^orchd replay: --pause-at \S+: not written yet: the newest version is \d+, committed at \S+\n$/);
  });
});

describe('a recording of many reads (pages of a thousand entries)', () => {
  const N = 3000;
  /** N versions of big Events after the recording's snapshot, written as export writes them (pages of 1000 entries). */
  const bigRecording = (): Buffer => {
    const template = rec.entries.find((e) => e.key.startsWith(`events.orch.io/events/${NS}/`))!.object;
    const from = rec.header.from;
    const pieces: Buffer[] = [MAGIC, frame({ ...rec.header, to: from + N })];
    const take = (pages: PageWriter) => {
      const page = pages.take(crc32);
      if (page) pieces.push(Buffer.from(page));
    };
    const state = new PageWriter(STATE);
    for (const [key, o] of rec.snapshot) state.addValue(Number(o.metadata.resourceVersion), 'put', key, packJson(o), undefined);
    take(state);
    const pages = new PageWriter(ENTRIES);
    for (let i = 1; i <= N; i++) {
      const name = `big${i % 1000}`;
      const value = { ...template, metadata: { ...template.metadata, name, resourceVersion: String(from + i), annotations: { pad: 'x'.repeat(2000), i: String(i) } } };
      pages.addValue(from + i, 'put', `events.orch.io/events/${NS}/${name}`, packJson(value), 1_700_000_000_000 + i);
      if (pages.full) take(pages);
    }
    take(pages);
    pieces.push(frame({ end: N }));
    return Buffer.concat(pieces);
  };

  it('is served as it is read: an informer sees every event in order, and a damaged record stops the replay after the pages before it', async () => {
    const bytes = bigRecording();
    expect(bytes.length).toBeGreaterThan(6 << 20);
    const whole = join(work, 'big.orchlog');
    await writeFile(whole, bytes);
    const r = await startReplayOf({ file: whole }, { speed: 'max', watchers: 1 });
    const { informer, seen, errors } = eventInformer(r.url, NS);
    const expected = Array.from({ length: N }, (_, j) => `${j < 1000 ? 'ADDED' : 'MODIFIED'} ${NS}/big${(j + 1) % 1000} ${rec.header.from + j + 1}`);
    try {
      await informer.start();
      expect((await r.done).entries).toBe(N);
      for (let i = 0; i < 150 && seen.length < N; i++) await sleep(100);
      expect(seen.filter((l) => l.includes('/big'))).toEqual(expected);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
      await r.close();
    }
    // The last entry's object damaged: the replay fails naming it, having served the reads before it.
    const damaged = Buffer.from(bytes);
    damaged[bytes.length - frame({ end: N }).length - 10] ^= 0xff;
    const bad = join(work, 'big-damaged.orchlog');
    await writeFile(bad, damaged);
    const d = await startReplayOf({ file: bad }, { speed: 'max' });
    try {
      // Records: the header (0), the state (1), then pages of 1000 entries: the last holds the damage.
      await expect(d.done).rejects.toThrow(new RegExp(`checksum mismatch in record ${1 + N / 1000} \\(a page of log records, after entry ${N - 1000}\\)`));
      const head = Number((await call(d.url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.metadata.resourceVersion);
      expect(head).toBeGreaterThan(rec.header.from + 1000);
      expect(head).toBeLessThan(rec.header.from + N);
    } finally {
      await d.close();
    }
  }, 120_000);
});

describe('a bad recording: one line, exit 1', () => {
  const refused = async (bytes: Buffer, pattern: RegExp) => {
    const f = join(work, `bad-${Math.random().toString(36).slice(2)}.orchlog`);
    await writeFile(f, bytes);
    const r = await run('replay', f, '--speed', 'max');
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(pattern);
  };

  it('a flipped byte inside an entry: a checksum error naming the record', async () => {
    const bytes = await readFile(file);
    const damaged = Buffer.from(bytes);
    damaged[bytes.length - 40] ^= 0xff;
    // Record 0 is the header, 1 the page of the state, 2 the page of the entries.
    await refused(damaged, /checksum mismatch in record 2 \(a page of log records\) at byte \d+: the recording is corrupt/);
  });

  it('a file cut inside a record, or at a record boundary', async () => {
    const bytes = await readFile(file);
    await refused(bytes.subarray(0, bytes.length - 30), /truncated inside record/);
    const end = frame({ end: rec.entries.length });
    await refused(bytes.subarray(0, bytes.length - end.length), /truncated after record \d+: no end record/);
  });

  it('a recording of a newer format, and a file that is no recording', async () => {
    await refused(Buffer.concat([MAGIC, frame({ format: 3, from: 1, to: 1 })]), /recording format 3 is newer than this orchd reads \(format 2\)/);
    await refused(Buffer.from('hello'), /not an orchd recording/);
  });
});

describe('the example recording in bench/', () => {
  it('is small, reads, and replays whole with its recorded versions', async () => {
    const example = new URL('../../bench/examples/writes.orchlog', import.meta.url).pathname;
    const bytes = await readFile(example);
    expect(bytes.length).toBeLessThan(300 * 1024);
    const ex = await readRecording(example);
    expect(ex.entries.length).toBeGreaterThanOrEqual(100);
    const r = await startReplayOf({ file: example }, { speed: 'max' });
    try {
      const report = await r.done;
      expect([report.from, report.to, report.entries]).toEqual([ex.header.from + 1, ex.entries[ex.entries.length - 1].rv, ex.entries.length]);
      const list = await call(r.url, 'GET', `${EVENTS}/events`);
      expect(Number(list.body.metadata.resourceVersion)).toBe(report.to);
    } finally {
      await r.close();
    }
  });
});
