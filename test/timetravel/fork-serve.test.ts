import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readForkPoints } from '../../src/config/fork-origin.js';
import { alongFile, checkpointsBeside, removeCheckpoints } from '../../src/log/checkpoint-file.js';
import { checkpointFile } from '../../src/log/leveldb-log.js';
import { loadServerConfig } from '../../src/config/server-config.js';
import { REASON_LABEL, SUMMARY_ANNOTATION, startEventReasons } from '../../examples/event-reasons/controller.js';
import { eventsConfig, keyed, onDisk, secret } from '../encryption/helpers.js';
import { folderBytes } from '../helpers/folder-contents.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { builtCli, isReady, killAll, spawnCli, spawnServer } from '../server/child.js';
import { EVENTS, createEvent, createNamespace, deleteEvent, event as eventOf, labelEvent } from '../watch/objects.js';
import { eventInformer, kubeConfigFor, run } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { jsonLines } from '../helpers/json-lines.js';
import { sleep } from '../helpers/poll.js';
import { outputLine } from '../helpers/child-lines.js';
import { knockUntil } from '../helpers/knock.js';
import { reconciler } from '../helpers/reconciler.js';

/*
 * A fork in use: a paused `orchd replay --fork` turned into a writable server on the same port (an
 * informer of the replay goes on against the fork), the example controller run against a fork with
 * its writes in `orchd diff`, a fork of an encrypted folder kept encrypted, and the fork point on
 * the /debug/timeline page in a real headless Chromium.
 */

const NS = 'fork-b';
const NOTE = 'a-plain-text-marker';
let work: string;
let original: TestServer;
let recording: string;
let start: number;
let head: number;

/** The server's newest version. */
const versionOf = async (base: string) => Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);

/** Polls read until check passes, at most 20 s. */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await read();
    if (check(v) || Date.now() > deadline) return v;
    await sleep(50);
  }
}

beforeAll(async () => {
  work = tempDir('orchd-fork-serve-');
  original = await startServer({ dataDir: join(work, 'original') });
  start = await versionOf(original.url);
  await createNamespace(original.url, NS);
  for (const [name, reason] of [
    ['pull-1', 'Pulled'],
    ['back-1', 'BackOff'],
    ['back-2', 'BackOff'],
    ['pull-2', 'Pulled'],
  ]) {
    const r = await call(original.url, 'POST', `${EVENTS}/namespaces/${NS}/events`, { ...event(name), reason });
    expect(r.status).toBe(201);
  }
  await labelEvent(original.url, 'pull-1', { seen: 'yes' }, NS);
  await deleteEvent(original.url, 'pull-2', NS);
  head = await versionOf(original.url);
  recording = join(work, 'incident.orchlog');
  expect((await run('export', '--data-dir', original.dataDir, '--from', String(start), '--file', recording)).code).toBe(0);
  await builtCli();
}, 300_000);

afterAll(async () => {
  await killAll();
  await original?.close();
});

/** A controller of the informer's Events: it labels each Event triaged=yes (test/helpers/reconciler.ts says when). */
function triager(informer: Parameters<typeof reconciler>[0], url: string): string[] {
  return reconciler(informer, async (o) => {
    if (o.metadata?.labels?.triaged === 'yes') return undefined;
    const patch = { metadata: { labels: { triaged: 'yes' } } };
    return (await call(url, 'PATCH', `${EVENTS}/namespaces/${NS}/events/${o.metadata?.name}`, patch, { 'Content-Type': 'application/merge-patch+json' })).status;
  });
}

/** An Event of the namespace whose note is a marker to look for on disk. */
const event = (name: string): Record<string, unknown> => eventOf(name, NS, undefined, NOTE);

describe('orchd replay --fork', () => {
  it('a replay paused and stepped is forked on request: the same port then takes writes, and its informer sees them', async () => {
    const dir = join(work, 'replay-fork');
    const pauseAt = start + 2;
    const child = spawnCli(await builtCli(), ['replay', recording, '--speed', 'max', '--pause-at', String(pauseAt), '--fork', dir, '--control-port', '0'], { lifeMs: 120_000 });
    const [, url] = await outputLine(child, /^serving (\S+):/m);
    const [, controls] = await outputLine(child, /^controls at (\S+): .*\/fork/m);
    // A controller attached to the replay, never restarted: its informer's watch ends with 410 at the fork, and it lists the fork's state.
    const watcher = eventInformer(url, NS);
    const writes = triager(watcher.informer, url);
    await watcher.informer.start();
    const status = async () => (await (await fetch(`${controls}/status`)).json()) as { paused: boolean; at: number };
    await eventually(status, (s) => s.paused && s.at === pauseAt);
    // The moment is found by stepping: two more entries.
    for (let i = 1; i <= 2; i++) {
      await fetch(`${controls}/step`, { method: 'POST' });
      await eventually(status, (s) => s.at === pauseAt + i);
    }
    // A replay is read-only until it is forked.
    expect((await call(url, 'POST', `${EVENTS}/namespaces/${NS}/events`, event('too-early'))).status).toBe(403);
    await eventually(
      async () => writes,
      (w) => w.length > 0,
    );
    expect(new Set(writes)).toEqual(new Set(['403']));
    // Fresh connections one after another through the switch: the port never refuses one.
    const knocks = knockUntil(url);
    const forked = await fetch(`${controls}/fork`, { method: 'POST' });
    expect(forked.status).toBe(200);
    expect(await forked.json()).toEqual({ forked: dir, at: pauseAt + 2, url });
    await outputLine(child, new RegExp(`^serving the fork ${dir} at ${url}, writable`, 'm'));
    const answers = await knocks.stop();
    expect(answers.ECONNREFUSED ?? 0).toBe(0);
    expect(Object.keys(answers)).toEqual(['200']);
    // The controller acted on the fork's state with no restart: each Event of the fork is triaged.
    const fork = await eventually(
      async () => (await call(url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.items as any[],
      (items) => items.every((o) => o.metadata.labels?.triaged === 'yes'),
    );
    expect(fork.map((o) => [o.metadata.name, o.metadata.labels?.triaged])).toEqual(['back-1', 'back-2', 'pull-1'].map((n) => [n, 'yes']));
    expect(watcher.errors).toEqual([]);
    expect(writes.filter((w) => w !== '403' && w !== '200')).toEqual([]);
    const rv = await createEvent(url, 'after-fork', NS);
    expect(rv).toBeGreaterThan(pauseAt + 2);
    // The informer of the replay lists and watches the fork: it sees the branch's write, and triages it.
    await eventually(
      async () => watcher.seen,
      (s) => s.includes(`ADDED ${NS}/after-fork ${rv}`),
    );
    expect(watcher.seen).toContain(`ADDED ${NS}/after-fork ${rv}`);
    await eventually(
      async () => (await call(url, 'GET', `${EVENTS}/namespaces/${NS}/events/after-fork`)).body.metadata.labels?.triaged,
      (t) => t === 'yes',
    );
    expect(watcher.errors).toEqual([]);
    await watcher.informer.stop();
    child.signal('SIGTERM');
    expect((await child.exited).code).toBe(0);
    expect((await readForkPoints(dir)).map((p) => [p.source, p.at])).toEqual([[recording, pauseAt + 2]]);
    // The folder is a fork like any other: served again, it holds the recording's history and the write.
    const again = await startServer({ dataDir: dir });
    try {
      for (let v = start; v <= pauseAt + 2; v++) {
        const at = (base: string) =>
          call(base, 'GET', `${EVENTS}/events?resourceVersion=${v}&resourceVersionMatch=Exact`).then((r) => r.body.items.map((o: any) => `${o.metadata.name} ${o.metadata.resourceVersion}`));
        expect(await at(again.url)).toEqual(await at(original.url));
      }
      expect((await call(again.url, 'GET', `${EVENTS}/namespaces/${NS}/events/after-fork`)).status).toBe(200);
    } finally {
      await again.close();
    }
  });

  it('with no control port and no terminal, it forks where it pauses (--pause-at); a bad target is refused before serving', async () => {
    const dir = join(work, 'replay-fork-at-pause');
    const child = spawnCli(await builtCli(), ['replay', recording, '--speed', 'max', '--pause-at', String(start + 1), '--fork', dir], { lifeMs: 120_000 });
    const [, url] = await outputLine(child, new RegExp(`^serving the fork ${dir} at (\\S+), writable`, 'm'));
    expect(await createEvent(url, 'branch', NS)).toBe(start + 2);
    child.signal('SIGTERM');
    expect((await child.exited).code).toBe(0);
    const refused = await run('replay', recording, '--pause-at', String(start + 1), '--fork', dir);
    expect([refused.code, refused.out]).toEqual([1, '']);
    expect(refused.err).toMatch(/^orchd replay: --fork \S+: the folder exists and is not empty/);
    const unasked = await run('replay', recording, '--fork', join(work, 'never'));
    expect([unasked.code, unasked.err.split('\n')[0]]).toEqual([2, 'orchd replay: --fork is asked for on the control port or the terminal: give --control-port, or --pause-at to fork there']);
  });
});

describe('orchd replay --fork at the end, and a control port it cannot have', () => {
  it('with a control port and neither --pause-at nor --keep, it stays up at the end: POST /fork forks there', async () => {
    const dir = join(work, 'replay-fork-at-end');
    const child = spawnCli(await builtCli(), ['replay', recording, '--speed', 'max', '--fork', dir, '--control-port', '0'], { lifeMs: 120_000 });
    const [, controls] = await outputLine(child, /^controls at (\S+): .*\/fork/m);
    const [, url] = await outputLine(child, /^serving the final state at (\S+) until interrupted or forked$/m);
    const forked = await fetch(`${controls}/fork`, { method: 'POST' });
    expect([forked.status, await forked.json()]).toEqual([200, { forked: dir, at: head, url }]);
    expect(await createEvent(url, 'after-the-end', NS)).toBe(head + 1);
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('a data folder replayed and forked is left as it was, to the byte', async () => {
    const folder = join(work, 'replayed-folder');
    const stopped = await startServer({ dataDir: folder });
    let end: number;
    try {
      end = await createNamespace(stopped.url, 'replayed');
    } finally {
      await stopped.close();
    }
    const before = await folderBytes(folder);
    const dir = join(work, 'replay-fork-of-folder');
    const child = spawnCli(await builtCli(), ['replay', '--data-dir', folder, '--speed', 'max', '--fork', dir, '--control-port', '0'], { lifeMs: 120_000 });
    const [, controls] = await outputLine(child, /^controls at (\S+): .*\/fork/m);
    await outputLine(child, /^serving the final state at \S+ until interrupted or forked$/m);
    const forked = await fetch(`${controls}/fork`, { method: 'POST' });
    expect([forked.status, (await forked.json()).at]).toEqual([200, end]);
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect((await folderBytes(folder)).equals(before)).toBe(true);
  });

  it('a control port in use: one line, exit status 1, nothing left serving', async () => {
    const busy = createNetServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      // --keep: a replay that got going would serve until interrupted.
      const child = spawnCli(await builtCli(), ['replay', recording, '--speed', 'max', '--keep', '--control-port', String(port)], { lifeMs: 60_000 });
      expect(await child.exited).toEqual({ code: 1, signal: null });
      expect([child.output.stdout, child.output.stderr]).toEqual(['', `orchd replay: --control-port ${port}: 127.0.0.1:${port} is in use\n`]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});

describe('a fork in use', () => {
  it('examples/event-reasons run against a fork: its writes are what orchd diff shows', async () => {
    const dir = join(work, 'event-reasons');
    expect((await run('fork', recording, '--at', 'HEAD', '--data-dir', dir)).code).toBe(0);
    const server = await spawnServer(dir);
    await server.waitForLine(isReady);
    const controller = startEventReasons(kubeConfigFor(server.url));
    try {
      await controller.synced;
      const summary = await eventually(
        async () => (await call(server.url, 'GET', `/api/v1/namespaces/${NS}`)).body.metadata.annotations?.[SUMMARY_ANNOTATION],
        (s) => s === '{"BackOff":2,"Pulled":1}',
      );
      expect(summary).toBe('{"BackOff":2,"Pulled":1}');
    } finally {
      await controller.stop();
    }
    const diff = await run('diff', String(head), 'HEAD', '--data-dir', dir, '-o', 'json-patch');
    expect(diff.code).toBe(1);
    const changes = jsonLines(diff.out);
    expect(changes.map((c) => c.object).sort()).toEqual([`events.events.orch.io/${NS}/back-1`, `events.events.orch.io/${NS}/back-2`, `events.events.orch.io/${NS}/pull-1`, `namespaces/${NS}`]);
    for (const c of changes.filter((c) => c.object.startsWith('events.events.orch.io/'))) {
      const reason = c.object.includes('back') ? 'BackOff' : 'Pulled';
      // The label added alone, or with the labels object when the Event had none.
      expect(c.patch).toContainEqual(
        expect.objectContaining({
          op: 'add',
          ...(c.object.includes('back') ? { path: '/metadata/labels', value: { [REASON_LABEL]: reason } } : { path: `/metadata/labels/${REASON_LABEL.replace('/', '~1')}`, value: reason }),
        }),
      );
    }
    expect(changes.find((c) => c.object === `namespaces/${NS}`).patch).toContainEqual(expect.objectContaining({ path: expect.stringContaining('/metadata/annotations') }));
    // The recording, forked at its head, is where the branch starts: the same diff between the two histories.
    const parted = await run('diff', recording, dir, '-o', 'json-patch');
    expect(
      parted.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).object)
        .sort(),
    ).toEqual(changes.map((c) => c.object).sort());
    server.signal('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('a server on a fork starts from the index-only checkpoint the fork wrote, and serves what one folding the whole log serves', async () => {
    const dir = join(work, 'checkpointed');
    // The head: the last entry is a delete.
    const at = head;
    expect((await run('fork', recording, '--at', String(at), '--data-dir', dir)).code).toBe(0);
    // Its one checkpoint is the index at N: the objects are in its log only once.
    expect(checkpointsBeside(checkpointFile(join(dir, 'log')))).toEqual([{ seq: at, file: alongFile(checkpointFile(join(dir, 'log')), at), indexOnly: true }]);
    const folded = join(work, 'folded');
    expect((await run('fork', recording, '--at', String(at), '--data-dir', folded)).code).toBe(0);
    await removeCheckpoints(checkpointFile(join(folded, 'log')));
    const fromCheckpoint = await spawnServer(dir);
    const fromLog = await spawnServer(folded);
    const ready = [await fromCheckpoint.waitForLine(isReady), await fromLog.waitForLine(isReady)];
    expect(ready.map((l) => [l.checkpointSeq, l.replayed])).toEqual([
      [at, 0],
      [0, expect.any(Number)],
    ]);
    expect(ready[1].replayed).toBeGreaterThan(at - start);
    const exact = (url: string, path: string, v: number) => call(url, 'GET', `${path}?resourceVersion=${v}&resourceVersionMatch=Exact`);
    for (let v = start; v <= at; v++) {
      for (const path of [`${EVENTS}/namespaces/${NS}/events`, '/api/v1/namespaces']) {
        const [a, b] = [await exact(fromCheckpoint.url, path, v), await exact(fromLog.url, path, v)];
        expect([a.status, a.body.items]).toEqual([b.status, b.body.items]);
      }
    }
    const [a, b] = [await call(fromCheckpoint.url, 'GET', `${EVENTS}/namespaces/${NS}/events/pull-1`), await call(fromLog.url, 'GET', `${EVENTS}/namespaces/${NS}/events/pull-1`)];
    expect([a.status, a.body]).toEqual([200, b.body]);
    const created = await call(fromCheckpoint.url, 'POST', `${EVENTS}/namespaces/${NS}/events`, { ...event('after-fork'), reason: 'New' });
    expect([created.status, Number(created.body.metadata.resourceVersion)]).toEqual([201, at + 1]);
    for (const s of [fromCheckpoint, fromLog]) {
      s.signal('SIGTERM');
      expect((await s.exited).code).toBe(0);
    }
  });

  it('a fork of an encrypted folder stays encrypted with the configuration given', async () => {
    const file = join(work, 'enc.yaml');
    await writeFile(file, eventsConfig(keyed('aesgcm', ['k1', secret()])));
    const loaded = loadServerConfig({ encryption: file });
    if (!loaded.ok) throw new Error('bad configuration');
    const sealed = await startServer({ dataDir: join(work, 'sealed'), config: loaded.config });
    let last: number;
    try {
      await createNamespace(sealed.url, NS);
      await call(sealed.url, 'POST', `${EVENTS}/namespaces/${NS}/events`, { ...event('secret-1'), reason: 'Sealed' });
      last = await versionOf(sealed.url);
    } finally {
      await sealed.close();
    }
    expect(await onDisk(join(work, 'sealed'), NOTE)).toBe(false);
    const dir = join(work, 'sealed-fork');
    const unread = await run('fork', '--source-data-dir', join(work, 'sealed'), '--at', 'HEAD', '--data-dir', dir);
    expect([unread.code, unread.err]).toEqual([1, expect.stringMatching(/cannot be read: .* needs the --encryption-provider-config it was written with\n$/)]);
    expect(existsSync(dir)).toBe(false);
    const sourceBytes = await folderBytes(join(work, 'sealed'));
    expect((await run('fork', '--source-data-dir', join(work, 'sealed'), '--at', 'HEAD', '--data-dir', dir, '--encryption-provider-config', file)).code).toBe(0);
    // The source folder is only read: not a byte of it changed, LevelDB's own files included.
    expect((await folderBytes(join(work, 'sealed'))).equals(sourceBytes)).toBe(true);
    expect(await onDisk(dir, NOTE)).toBe(false);
    expect((await run('state', '--data-dir', dir, '--at', 'HEAD')).code).toBe(1);
    const state = await run('state', '--data-dir', dir, '--at', String(last), '--encryption-provider-config', file, '-n', NS, '--kind', 'events', '-o', 'json');
    expect(
      state.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).note),
    ).toEqual([NOTE]);
    // A recording holds plain values: its fork is sealed with the configuration given.
    const fromRecording = join(work, 'recording-sealed');
    expect((await run('fork', recording, '--at', 'HEAD', '--data-dir', fromRecording, '--encryption-provider-config', file)).code).toBe(0);
    expect(await onDisk(fromRecording, NOTE)).toBe(false);
    // No checkpoint of plain objects beside a sealed log: its server folds the log through the providers.
    expect(checkpointsBeside(checkpointFile(join(fromRecording, 'log')))).toEqual([]);
    const served = await startServer({ dataDir: fromRecording, config: loaded.config });
    try {
      const r = await call(served.url, 'GET', `${EVENTS}/namespaces/${NS}/events/back-1`);
      expect([r.status, r.body.note]).toEqual([200, NOTE]);
      await createEvent(served.url, 'new-sealed', NS);
    } finally {
      await served.close();
    }
    expect(await onDisk(fromRecording, NOTE)).toBe(false);
  });

  it('the /debug/timeline page marks each fork point (headless Chromium)', async () => {
    const first = join(work, 'tl-first');
    const second = join(work, 'tl-second');
    const at = start + 3;
    expect((await run('fork', recording, '--at', String(at), '--data-dir', first)).code).toBe(0);
    const one = await startServer({ dataDir: first });
    let branch: number;
    try {
      branch = await createEvent(one.url, 'branch-1', NS);
    } finally {
      await one.close();
    }
    const firstBytes = await folderBytes(first);
    expect((await run('fork', '--source-data-dir', first, '--at', 'HEAD', '--data-dir', second)).code).toBe(0);
    expect((await folderBytes(first)).equals(firstBytes)).toBe(true);
    const server = await startServer({ dataDir: second });
    let browser: Browser | undefined;
    try {
      await createEvent(server.url, 'branch-2', NS);
      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(`${server.url}/debug/timeline`);
      await page.waitForSelector('line.fork');
      expect(await page.$$eval('line.fork', (ls) => ls.map((l) => l.getAttribute('data-rv')))).toEqual([String(at), String(branch)]);
      expect(await page.$$eval('line.fork title', (ts) => ts.map((t) => t.textContent))).toEqual([`forked from ${recording} at version ${at}`, `forked from ${first} at version ${branch}`]);
      expect(await page.$eval('#summary', (e) => e.textContent)).toContain(`Forked from ${recording} at version ${at}. Forked from ${first} at version ${branch}.`);
      // Each line lies between the bars of the versions before it and after it.
      const xs = await page.$$eval('line.fork', (ls) => ls.map((l) => Number(l.getAttribute('x1'))));
      const bars = await page.$$eval('rect.bucket', (rs) => rs.map((r) => ({ x: Number(r.getAttribute('x')), w: Number(r.getAttribute('width')), rv: Number(r.getAttribute('data-rv')) })));
      for (const [i, rv] of [at, branch].entries()) {
        const bar = bars.find((b) => b.x <= xs[i] && xs[i] <= b.x + b.w);
        expect(bar && bar.rv >= rv).toBe(true);
      }
    } finally {
      await browser?.close();
      await server.close();
    }
  });
});
