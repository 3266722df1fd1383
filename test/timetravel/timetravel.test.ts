import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Level } from 'level';
import { decodeEntry, packJson } from '../../src/log/codec.js';
import { snapshotLogFolder } from '../../src/timetravel/sources/log-snapshot.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { builtCli } from '../server/child.js';
import { EVENTS, createEvent, createNamespace, event, labelEvent } from '../watch/objects.js';
import { run, runOn, sink, type Run } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { jsonLines } from '../helpers/json-lines.js';
import { sleep } from '../helpers/poll.js';

/*
 * A real orchd run with a data folder, still running while the commands read it: each command is run
 * against the data folder (a copy of its log, see src/timetravel/sources/data-dir.ts) and against the
 * server's API, and the two outputs must agree (times aside: the API carries no commit times).
 */

const NS = 'tt-a';
let server: TestServer;
let dataDir: string;
let started: number;
let ended: number;
const rv: Record<string, number> = {};

/** The command against the data folder and against the server: both outputs, both must succeed. */
async function both(command: string, ...args: string[]): Promise<{ dir: Run; api: Run }> {
  const dir = await run(command, '--data-dir', dataDir, ...args);
  const api = await run(command, '--server', server.url, ...args);
  expect(dir.err + api.err).not.toMatch(/error|Error/);
  // diff says the sides differ as diff(1) does: with status 1.
  const code = command === 'diff' ? 1 : 0;
  expect([dir.code, api.code], dir.err + api.err).toEqual([code, code]);
  return { dir, api };
}

const timeless = (lines: any[]) => lines.map(({ time: _t, timeSource: _s, ...rest }) => rest);

beforeAll(async () => {
  dataDir = tempDir('orchd-timetravel-');
  server = await startServer({ dataDir });
  const base = server.url;
  started = Date.now();
  rv.ns = await createNamespace(base, NS);
  rv.e1 = await createEvent(base, 'e1', NS, { app: 'x' });
  // Named by its writer, so history can say who wrote it.
  const e2 = await call(base, 'POST', `${EVENTS}/namespaces/${NS}/events?fieldManager=tt-maker`, event('e2', NS));
  expect(e2.status).toBe(201);
  rv.e2 = Number(e2.body.metadata.resourceVersion);
  rv.label = await labelEvent(base, 'e1', { step: '2' }, NS);
  rv.e3 = await createEvent(base, 'e3', NS, { app: 'x' });
  const del = await call(base, 'DELETE', `${EVENTS}/namespaces/${NS}/events/e2`);
  expect(del.status).toBe(200);
  rv.del = Number((await call(base, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.metadata.resourceVersion);
  const nsB = await call(base, 'POST', '/api/v1/namespaces?fieldManager=tt-maker', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tt-b' } });
  rv.nsB = Number(nsB.body.metadata.resourceVersion);
  const labelled = { ...nsB.body, metadata: { ...nsB.body.metadata, labels: { ...nsB.body.metadata.labels, team: 'a' } } };
  const relabel = await call(base, 'PUT', '/api/v1/namespaces/tt-b?fieldManager=tt-labeler', labelled);
  expect(relabel.status).toBe(200);
  rv.nsBLabel = Number(relabel.body.metadata.resourceVersion);
  ended = Date.now();
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('orchd log', () => {
  it('lists every change in order, the same from the data folder and from the server', async () => {
    const { dir, api } = await both('log', '-o', 'json', '--from', String(rv.ns));
    const d = jsonLines(dir.out);
    expect(timeless(d)).toEqual(timeless(jsonLines(api.out)));
    const mine = d.filter((l) => l.object.metadata.namespace === NS || l.object.metadata.name?.startsWith('tt-'));
    expect(mine.map((l) => `${l.resourceVersion} ${l.type} ${l.object.metadata.name}`)).toEqual([
      `${rv.ns} ADDED tt-a`,
      `${rv.e1} ADDED e1`,
      `${rv.e2} ADDED e2`,
      `${rv.label} MODIFIED e1`,
      `${rv.e3} ADDED e3`,
      `${rv.del} DELETED e2`,
      `${rv.nsB} ADDED tt-b`,
      `${rv.nsBLabel} MODIFIED tt-b`,
    ]);
  });

  it('times are the log commit times (ms), never going back, the same from the data folder and from the server', async () => {
    const { dir, api } = await both('log', '-o', 'json', '--from', String(rv.ns));
    const d = jsonLines(dir.out);
    expect(new Set(d.map((l) => l.timeSource))).toEqual(new Set(['log']));
    const times = d.map((l) => Date.parse(l.time));
    expect(times.every((t, i) => t >= started - 1 && t <= ended + 1 && (i === 0 || t >= times[i - 1]))).toBe(true);
    expect(jsonLines(api.out)).toEqual(d);
    expect(api.err).toBe('');
  });

  it('filters by kind, namespace and label selector; the table is the same from both', async () => {
    const { dir, api } = await both('log', '--kind', 'events', '-n', NS, '-l', 'app=x');
    expect(dir.out.split('\n')[0]).toMatch(/^RESOURCEVERSION\s+TIME\s+EVENT\s+RESOURCE\s+NAMESPACE\s+NAME\s+USER\s+MANAGER$/);
    const rows = (t: string) =>
      t
        .trim()
        .split('\n')
        .slice(1)
        .map((l) =>
          l
            .split(/\s{3,}/)
            .filter((_, i) => i !== 1)
            .join(' '),
        );
    expect(rows(dir.out)).toEqual(rows(api.out));
    expect(rows(dir.out).map((r) => r.split(' ').slice(0, 5).join(' '))).toEqual([
      `${rv.e1} ADDED events.events.orch.io ${NS} e1`,
      `${rv.label} MODIFIED events.events.orch.io ${NS} e1`,
      `${rv.e3} ADDED events.events.orch.io ${NS} e3`,
    ]);
    const ns = jsonLines((await both('log', '--kind', 'ns', '-o', 'json', '--from', String(rv.ns))).dir.out);
    expect(ns.map((l) => l.object.metadata.name)).toEqual(['tt-a', 'tt-b', 'tt-b']);
  });
});

describe('orchd state', () => {
  it('--at a version shows the world then, in every format, the same from both', async () => {
    for (const o of ['table', 'yaml', 'json']) {
      const { dir, api } = await both('state', '--at', String(rv.e3), '--kind', 'events', '-n', NS, '-o', o);
      expect(dir.out).toBe(api.out);
    }
    const { dir } = await both('state', '--at', String(rv.e3), '--kind', 'events', '-n', NS, '-o', 'yaml');
    const list = parseYaml(dir.out);
    expect(list.metadata.resourceVersion).toBe(String(rv.e3));
    expect(list.items.map((o: any) => `${o.metadata.name} ${o.metadata.resourceVersion}`)).toEqual([`e1 ${rv.label}`, `e2 ${rv.e2}`, `e3 ${rv.e3}`]);
    const later = jsonLines((await both('state', '--at', String(rv.del), '--kind', 'events', '-n', NS, '-o', 'json')).dir.out);
    expect(later.map((o) => o.metadata.name)).toEqual(['e1', 'e3']);
  });

  it('state -o json at every version, of every kind, is the same bytes from the folder and from the server, which streams it', async () => {
    for (let at = 1; at <= rv.nsBLabel; at++) {
      const { dir, api } = await both('state', '--at', String(at), '-o', 'json');
      expect([at, api.out]).toEqual([at, dir.out]);
      expect(dir.out.length).toBeGreaterThan(0);
    }
    // One namespace, a label selector: the same filters on the streamed objects.
    const { dir, api } = await both('state', '--at', String(rv.e3), '-n', NS, '-l', 'app=x', '-o', 'json');
    expect(api.out).toBe(dir.out);
    expect(jsonLines(api.out).map((o) => o.metadata.name)).toEqual(['e1', 'e3']);
    // What the tools read: the server's own transcoding, key by key.
    const res = await fetch(`${server.url}/debug/log/state?at=${rv.e3}&collection=events.orch.io/events&namespace=${NS}`);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/plain; charset=utf-8']);
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf('\t')))).toEqual(['e1', 'e2', 'e3'].map((n) => `events.orch.io/events/${NS}/${n}`));
    expect(JSON.parse(lines[2].slice(lines[2].indexOf('\t') + 1)).metadata.resourceVersion).toBe(String(rv.e3));
    const future = await call(server.url, 'GET', `/debug/log/state?at=${rv.nsBLabel + 1000}`);
    expect([future.status, future.body.kind, future.body.reason]).toEqual([504, 'Status', 'Timeout']);
  });

  it('--at a time is the newest version committed at or before it', async () => {
    const lines = jsonLines((await run('log', '--data-dir', dataDir, '-o', 'json', '--from', String(rv.label), '--to', String(rv.label))).out);
    const at = lines[0].time;
    const byTime = await run('state', '--data-dir', dataDir, '--at', at, '--kind', 'events', '-n', NS, '-o', 'json');
    const byRv = await run('state', '--data-dir', dataDir, '--at', String(rv.label), '--kind', 'events', '-n', NS, '-o', 'json');
    expect(byTime.code).toBe(0);
    expect(byTime.out).toBe(byRv.out);
    expect(jsonLines(byTime.out).map((o) => o.metadata.name)).toEqual(['e1', 'e2']);
  });
});

describe('orchd diff', () => {
  it('shows what changed between two versions as a unified YAML diff or as JSON patches, the same from both', async () => {
    const patches = await both('diff', String(rv.e2), String(rv.del), '-n', NS, '-o', 'json-patch');
    expect(patches.dir.out).toBe(patches.api.out);
    const byObject = Object.fromEntries(jsonLines(patches.dir.out).map((l) => [l.object, l.patch]));
    expect(Object.keys(byObject).sort()).toEqual([`events.events.orch.io/${NS}/e1`, `events.events.orch.io/${NS}/e2`, `events.events.orch.io/${NS}/e3`]);
    expect(byObject[`events.events.orch.io/${NS}/e1`]).toContainEqual({ op: 'add', path: '/metadata/labels/step', value: '2' });
    expect(byObject[`events.events.orch.io/${NS}/e2`]).toEqual([{ op: 'remove', path: '' }]);
    expect(byObject[`events.events.orch.io/${NS}/e3`][0]).toMatchObject({ op: 'add', path: '' });
    const unified = await both('diff', String(rv.e2), String(rv.label), '-n', NS);
    expect(unified.dir.out).toBe(unified.api.out);
    expect(unified.dir.out).toContain(`+++ events.events.orch.io/${NS}/e1@${rv.label}`);
    expect(unified.dir.out).toMatch(/^\+ {4}step: "2"$/m);
    // Not a terminal here: no colours.
    expect(unified.dir.out).not.toContain('\x1b[');
  });
});

describe('orchd history', () => {
  it('shows every version of one object with its diff, manager, operation and time, the same from both', async () => {
    const { dir, api } = await both('history', 'events/e2', '-n', NS, '-o', 'json-patch');
    const d = jsonLines(dir.out);
    expect(d.map(({ time: _t, ...rest }) => rest)).toEqual(jsonLines(api.out).map(({ time: _t, ...rest }) => rest));
    expect(d.map((l) => `${l.resourceVersion} ${l.type}`)).toEqual([`${rv.e2} ADDED`, `${rv.del} DELETED`]);
    expect(d[1].patch).toEqual([{ op: 'remove', path: '' }]);
    const ns = jsonLines((await both('history', 'namespaces/tt-b', '-o', 'json-patch')).dir.out);
    // Who, as the log kept it with each entry: the user, the field manager and the verb.
    expect(ns.map((l) => `${l.resourceVersion} ${l.type} ${l.user} ${l.manager}`)).toEqual([
      `${rv.nsB} ADDED system:anonymous tt-maker (create)`,
      `${rv.nsBLabel} MODIFIED system:anonymous tt-labeler (update)`,
    ]);
    expect(ns[1].patch).toContainEqual({ op: 'add', path: '/metadata/labels/team', value: 'a' });
    const text = await both('history', 'events/e1', '-n', NS);
    const heads = text.dir.out.split('\n').filter((l) => l.startsWith('# '));
    expect(heads.map((h) => h.split(/\s{3}/)[0] + ' ' + h.split(/\s{3}/)[2])).toEqual([`# ${rv.e1} ADDED`, `# ${rv.label} MODIFIED`]);
    expect(text.dir.out).toMatch(/^\+ {4}step: "2"$/m);
    const strip = (t: string) => t.replace(/^(# \d+ {3})\S+/gm, '$1');
    expect(strip(text.dir.out)).toBe(strip(text.api.out));
  });
});

describe('a log written before it kept commit times', () => {
  it('still reads: times come from the objects own timestamps, and the command says so', async () => {
    const old = tempDir('orchd-timetravel-old-');
    // The layout an older orchd wrote: {t, k, v}, no commit time.
    await snapshotLogFolder(join(dataDir, 'log'), join(old, 'log'));
    const db = new Level<Buffer, Buffer>(join(old, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    let rewritten = 0;
    for await (const [k, v] of db.iterator({ lt: Buffer.from([0xff]) })) {
      const e = decodeEntry(0, v);
      await db.put(k, packJson({ t: e.type === 'put' ? 'p' : 'd', k: e.key, v: e.value }));
      rewritten++;
    }
    await db.close();
    expect(rewritten).toBeGreaterThan(5);
    const before = await run('log', '--data-dir', dataDir, '-o', 'json', '--from', String(rv.ns), '--to', String(rv.nsBLabel));
    const after = await run('log', '--data-dir', old, '-o', 'json', '--from', String(rv.ns), '--to', String(rv.nsBLabel));
    expect(after.code).toBe(0);
    expect(after.err).toMatch(/note: times are taken from the objects' own timestamps \(to the second\), not from the log: this log was written before it kept commit times/);
    const lines = jsonLines(after.out);
    // The same changes; the old layout kept no writers.
    expect(lines.every((l) => l.writer === null)).toBe(true);
    expect(timeless(lines).map(({ writer: _w, ...l }) => l)).toEqual(timeless(jsonLines(before.out)).map(({ writer: _w, ...l }) => l));
    expect(new Set(lines.map((l) => l.timeSource))).toEqual(new Set(['object-timestamps']));
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(l.time))).toBe(true);
    // A time finds its version by those stamps: the newest version stamped at or before it.
    const at = await run('state', '--data-dir', old, '--at', lines[lines.length - 1].time, '--kind', 'events', '-n', NS, '-o', 'json');
    expect(jsonLines(at.out).map((o) => o.metadata.name)).toEqual(['e1', 'e3']);
    // Past the newest stamp, as past the head: not written yet.
    const later = await run('state', '--data-dir', old, '--at', new Date(Date.parse(lines[lines.length - 1].time) + 5000).toISOString());
    expect(later.code).toBe(1);
    expect(later.err).toMatch(/not written yet: the newest version is \d+, committed at /);
  });
});

describe('on a terminal', () => {
  it('a diff is coloured', async () => {
    const out = Object.assign(sink(), { isTTY: true });
    const r = await runOn(out, 'diff', '--data-dir', dataDir, String(rv.e2), String(rv.label), '-n', NS);
    expect(r.code).toBe(1);
    expect(r.out).toContain('\x1b[32m+    step: "2"\x1b[0m');
  });
});

describe('bad input: one line, exit 1', () => {
  const oneLine = (r: Run, pattern: RegExp) => {
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(pattern);
  };

  it.each(['--data-dir', '--server'])('from %s: an unknown kind, a version above the head, a time that is not one', async (flag) => {
    const source = flag === '--data-dir' ? dataDir : server.url;
    oneLine(await run('log', flag, source, '--kind', 'pods'), /unknown kind "pods": orchd serves namespaces, events/);
    oneLine(await run('state', flag, source, '--at', '99999999'), /--at 99999999: not written yet: the newest version is \d+/);
    const notATime = await run('state', flag, source, '--at', 'yesterday');
    // A value that is no version at all is a mistake in the command line: status 2, with where to look.
    expect(notATime.code).toBe(2);
    expect(notATime.err).toMatch(/^orchd state: --at: "yesterday": neither a resourceVersion .* nor a time .*\nRun 'orchd state --help' for usage\.\n$/);
    oneLine(await run('history', flag, source, 'events/nope', '-n', NS), /no version of it in the log/);
  });

  it('a version below the compaction horizon is gone (410), with the oldest version kept, from both', async () => {
    const dir = tempDir('orchd-timetravel-compacted-');
    const s = await startServer({ dataDir: dir });
    try {
      await createNamespace(s.url, 'c1');
      const horizon = await createNamespace(s.url, 'c2');
      await createNamespace(s.url, 'c3');
      await s.store.compact(horizon);
      for (const [flag, source] of [
        ['--data-dir', dir],
        ['--server', s.url],
      ]) {
        oneLine(await run('state', flag, source, '--at', '2'), new RegExp(`--at 2: gone \\(410\\): the log is compacted below it; the oldest version kept is ${horizon - 1}`));
      }
    } finally {
      await s.close();
    }
  });

  it('the built orchd command says it in one line on stderr and exits 1, without a stack trace', async () => {
    const cli = await builtCli();
    const r = await promisify(execFile)(process.execPath, [cli, 'state', '--data-dir', dataDir, '--at', '99999999']).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orchd state: --at 99999999: not written yet: the newest version is \d+\n$/);
    const ok = await promisify(execFile)(process.execPath, [cli, 'log', '--data-dir', dataDir, '--kind', 'namespaces', '-o', 'json']);
    expect(jsonLines(ok.stdout).map((l) => l.object.metadata.name)).toContain('tt-b');
  }, 180_000);
});

describe('more than one page', () => {
  it('the state of more objects than a list page (500) reads whole from the server, as from the data folder', async () => {
    const ns = 'tt-many';
    await createNamespace(server.url, ns);
    for (let i = 0; i < 520; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => createEvent(server.url, `m${i + j}`, ns)));
    const head = Number((await call(server.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    const { dir, api } = await both('state', '--at', String(head), '--kind', 'events', '-n', ns, '-o', 'json');
    expect(jsonLines(api.out)).toHaveLength(520);
    expect(api.out).toBe(dir.out);
  }, 60_000);
});

describe('orchd log --follow', () => {
  it('goes on printing what is written after the head, until stopped', async () => {
    const cli = await builtCli();
    const child = spawn(process.execPath, [cli, 'log', '--server', server.url, '--kind', 'namespaces', '-o', 'json', '--follow'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    try {
      for (let i = 0; i < 100 && !out.includes('"tt-b"'); i++) await sleep(100);
      expect(out).toContain('"tt-b"');
      const created = await createNamespace(server.url, 'tt-followed');
      for (let i = 0; i < 100 && !out.includes('"tt-followed"'); i++) await sleep(100);
      const line = jsonLines(out).find((l) => l.object.metadata.name === 'tt-followed');
      expect(line).toMatchObject({ resourceVersion: String(created), type: 'ADDED' });
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
