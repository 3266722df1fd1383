import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readForkPoints } from '../../src/config/fork-origin.js';
import { eventsConfig, kmsProvider } from '../encryption/helpers.js';
import { folderBytes } from '../helpers/folder-contents.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { killAll, spawnServer, isReady, type ServerChild } from '../server/child.js';
import { EVENTS, createEvent, createNamespace, deleteEvent, labelEvent } from '../watch/objects.js';
import { HttpWatch } from '../watch/stream.js';
import { run } from './helpers.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

/*
 * `orchd fork` through the command, on real folders: a recorded run (an orchd with a data folder,
 * exported from a version after its start) is forked at a version N in its middle, and the fork
 * is served by a real `orchd serve` process. At every version from the recording's start to N the
 * fork answers Exact lists as the original does; its first write takes a version after N, which a
 * watch from N sees; the recording is not changed. Then the same from a running server's data
 * folder, forks of forks, and every bad input: one line, exit status 1, nothing written.
 */

const NS = 'fork-a';
const LISTS = [`${EVENTS}/events`, '/api/v1/namespaces', '/apis/rbac.authorization.orch.io/v1/clusterroles'];

let work: string;
let original: TestServer;
let recording: string;
let recordingSum: string;
/** The recording's first version (its snapshot's), N, and the original's head when it was exported. */
let start: number;
let n: number;
let head: number;
let forkDir: string;
let fork: ServerChild;

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** An Exact list's items as names and versions, or the status of its refusal. */
async function listAt(base: string, path: string, rv: number): Promise<string[] | number> {
  const r = await call(base, 'GET', `${path}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
  if (r.status !== 200) return r.status;
  return r.body.items.map((o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name} ${o.metadata.resourceVersion} ${JSON.stringify(o.metadata.labels ?? {})}`);
}

beforeAll(async () => {
  work = tempDir('orchd-fork-');
  original = await startServer({ dataDir: join(work, 'original') });
  const base = original.url;
  await createNamespace(base, 'before');
  start = Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
  await createNamespace(base, NS);
  for (let i = 0; i < 5; i++) await createEvent(base, `e${i}`, NS);
  await labelEvent(base, 'e1', { step: '2' }, NS);
  n = await labelEvent(base, 'e1', { step: '3' }, NS);
  // After the fork point: the original goes one way, the branch will go another.
  await deleteEvent(base, 'e2', NS);
  await labelEvent(base, 'e1', { step: 'original' }, NS);
  await createEvent(base, 'after', NS);
  head = Number((await call(base, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
  recording = join(work, 'incident.orchlog');
  expect((await run('export', '--data-dir', original.dataDir, '--from', String(start), '--file', recording)).code).toBe(0);
  recordingSum = await sha256(recording);
  forkDir = join(work, 'what-if');
  const r = await run('fork', recording, '--at', String(n), '--data-dir', forkDir);
  expect([r.code, r.err]).toEqual([0, '']);
  expect(r.out).toBe(`forked ${recording} at ${n} into ${forkDir}: versions ${start}..${n} are the source's, the next write takes ${n + 1}\n`);
  fork = await spawnServer(forkDir);
  await fork.waitForLine(isReady);
}, 300_000);

afterAll(async () => {
  await killAll();
  await original?.close();
});

describe('orchd fork RECORDING --at N', () => {
  it("serves, at every version from the recording's start to N, the Exact lists the original serves", async () => {
    for (let v = start; v <= n; v++) {
      for (const path of LISTS) expect([v, path, await listAt(fork.url, path, v)]).toEqual([v, path, await listAt(original.url, path, v)]);
    }
    // Before the recording's start the fork knows nothing: the version is compacted away there.
    expect(await listAt(fork.url, LISTS[0], start - 1)).toBe(410);
  });

  it('takes writes after N: a watch from N sees the first, and the recording is unchanged', async () => {
    const w = await HttpWatch.open(fork.url, `${EVENTS}/namespaces/${NS}/events?watch=1&resourceVersion=${n}`);
    try {
      const rv = await labelEvent(fork.url, 'e1', { step: 'branch' }, NS);
      expect(rv).toBeGreaterThan(n);
      await w.until((evs) => evs.some((e) => e.object?.metadata?.resourceVersion === String(rv)), `version ${rv}`);
      expect(w.changes().map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.labels?.step}`)).toEqual(['MODIFIED e1 branch']);
    } finally {
      w.abort();
    }
    // The original went its own way after N; the branch did not see it.
    expect((await call(fork.url, 'GET', `${EVENTS}/namespaces/${NS}/events/e2`)).status).toBe(200);
    expect((await call(original.url, 'GET', `${EVENTS}/namespaces/${NS}/events/e2`)).status).toBe(404);
    expect(await sha256(recording)).toBe(recordingSum);
  });

  it("a watch from the recording's start replays what the original's did, up to N", async () => {
    const seen = async (base: string) => {
      const w = await HttpWatch.open(base, `${EVENTS}/namespaces/${NS}/events?watch=1&resourceVersion=${start}`);
      try {
        await w.until((evs) => evs.some((e) => Number(e.object?.metadata?.resourceVersion) >= n), `version ${n}`);
        return w
          .changes()
          .filter((e) => Number(e.object.metadata.resourceVersion) <= n)
          .map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
      } finally {
        w.abort();
      }
    };
    const expected = await seen(original.url);
    expect(expected).toHaveLength(7);
    expect(await seen(fork.url)).toEqual(expected);
  });

  it("orchd history on the fork is the original's up to N, then the branch's", async () => {
    const versions = async (dir: string) =>
      (await run('history', 'events/e1', '-n', NS, '--data-dir', dir, '-o', 'json-patch')).out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const mine = await versions(forkDir);
    const theirs = await versions(original.dataDir);
    const upToN = (vs: any[]) => vs.filter((v) => Number(v.resourceVersion) <= n);
    expect(upToN(mine)).toEqual(upToN(theirs));
    expect(mine.map((v) => v.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED']);
    expect(mine[3].patch).toContainEqual({ op: 'replace', path: '/metadata/labels/step', value: 'branch' });
  });

  it('orchd diff: what the branch did since N (HEAD), and where it and the original part ways, object by object', async () => {
    const patches = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const branch = await run('diff', String(n), 'HEAD', '--data-dir', forkDir, '-n', NS, '-o', 'json-patch');
    // They differ: status 1, as diff(1) says it.
    expect(branch.code).toBe(1);
    expect(patches(branch.out).map((p) => [p.object, p.from, p.patch.find((op: any) => op.path === '/metadata/labels/step')?.value])).toEqual([
      [`events.events.orch.io/${NS}/e1`, String(n), 'branch'],
    ]);
    // Two histories, each at its head: the recording (the original's way) on the left, the branch on the right.
    const parted = await run('diff', recording, forkDir, '-n', NS, '-o', 'json-patch');
    // fork.json tells where the two part.
    expect([parted.code, parted.err]).toEqual([1, `orchd diff: ${forkDir} is a fork of ${recording} at ${n}: the same history up to version ${n}, they part from ${n + 1}\n`]);
    const byObject = Object.fromEntries(patches(parted.out).map((p) => [p.object, p]));
    expect(Object.keys(byObject).sort()).toEqual([`events.events.orch.io/${NS}/after`, `events.events.orch.io/${NS}/e1`, `events.events.orch.io/${NS}/e2`]);
    expect([byObject[`events.events.orch.io/${NS}/after`].patch, byObject[`events.events.orch.io/${NS}/e2`].patch[0].op]).toEqual([[{ op: 'remove', path: '' }], 'add']);
    expect(byObject[`events.events.orch.io/${NS}/e1`]).toMatchObject({ from: `${head} (${recording})`, to: expect.stringMatching(new RegExp(`^\\d+ \\(${forkDir}\\)$`)) });
    expect(byObject[`events.events.orch.io/${NS}/e1`].patch).toContainEqual({ op: 'replace', path: '/metadata/labels/step', value: 'branch' });
    // At the fork point the two are the same, object by object; as a unified YAML diff too.
    expect(await run('diff', `${recording}@${n}`, `${forkDir}@${n}`)).toEqual({
      code: 0,
      out: '',
      err: `orchd diff: ${forkDir} is a fork of ${recording} at ${n}: the same history up to version ${n}, they part from ${n + 1}\n`,
    });
    const yaml = await run('diff', `${recording}@${n}`, `${forkDir}@HEAD`, '-n', NS);
    expect(yaml.out).toContain(`--- events.events.orch.io/${NS}/e1@${n} (${recording})\n`);
    expect(yaml.out).toContain('+    step: branch\n');
    const mixed = await run('diff', String(n), forkDir);
    expect([mixed.code, mixed.err.split('\n')[0]]).toEqual([2, expect.stringMatching(/^orchd diff: give two versions of one history/)]);
  });

  it('says where it came from in fork.json', async () => {
    const points = await readForkPoints(forkDir);
    expect(points).toEqual([{ source: recording, at: n, time: expect.any(Number), madeAt: expect.any(String) }]);
  });
});

describe('orchd fork --source-data-dir', () => {
  it("forks a running server's folder from a snapshot while it takes writes; the fork matches it at every version", async () => {
    const dir = join(work, 'from-folder');
    const writes = (async () => {
      for (let i = 0; i < 20; i++) await createEvent(original.url, `busy-${i}`, NS);
    })();
    const r = await run('fork', '--source-data-dir', original.dataDir, '--at', String(head), '--data-dir', dir);
    await writes;
    expect([r.code, r.err]).toEqual([0, '']);
    const server = await startServer({ dataDir: dir });
    try {
      for (let v = 1; v <= head; v++) {
        for (const path of LISTS) expect([v, path, await listAt(server.url, path, v)]).toEqual([v, path, await listAt(original.url, path, v)]);
      }
      expect(Number((await call(server.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion)).toBe(head);
      // The source server is not disturbed.
      expect(await createEvent(original.url, 'still-writable', NS)).toBeGreaterThan(head + 20);
    } finally {
      await server.close();
    }
  });

  it("forks a stopped server's folder at a time, and not a byte of the folder changes, LevelDB's own files included", async () => {
    const dir = join(work, 'stopped');
    const stopped = await startServer({ dataDir: dir });
    let at: number;
    try {
      await createNamespace(stopped.url, NS);
      at = await createEvent(stopped.url, 'kept', NS);
      // A later commit time than the fork's --at.
      await sleep(20);
      await createEvent(stopped.url, 'later', NS);
    } finally {
      await stopped.close();
    }
    const log = (await run('log', '--data-dir', dir, '-o', 'json')).out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const time = log.find((l) => Number(l.resourceVersion) === at).time;
    const before = await folderBytes(dir);
    const target = join(work, 'stopped-fork');
    const r = await run('fork', '--source-data-dir', dir, '--at', time, '--data-dir', target);
    expect([r.code, r.out, r.err]).toEqual([0, `forked ${dir} at ${at} into ${target}: versions 1..${at} are the source's, the next write takes ${at + 1}\n`, '']);
    expect((await folderBytes(dir)).equals(before)).toBe(true);
    const events = await run('state', '--data-dir', target, '--at', 'HEAD', '--kind', 'events', '-n', NS, '-o', 'json');
    expect(
      events.out
        .split('\n')
        .filter(Boolean)
        .map((l) => `${JSON.parse(l).metadata.name} ${JSON.parse(l).metadata.resourceVersion}`),
    ).toEqual([`kept ${at}`]);
  });

  it("forks a fork: the history reaches back to the first recording's start, through both fork points", async () => {
    const branchHead = Number((await call(fork.url, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    const dir = join(work, 'fork-of-fork');
    const r = await run('fork', '--source-data-dir', forkDir, '--at', 'HEAD', '--data-dir', dir);
    expect([r.code, r.err]).toEqual([0, '']);
    const points = await readForkPoints(dir);
    expect(points.map((p) => [p.source, p.at])).toEqual([
      [recording, n],
      [forkDir, branchHead],
    ]);
    const server = await startServer({ dataDir: dir });
    try {
      for (let v = start; v <= branchHead; v++) expect(await listAt(server.url, LISTS[0], v)).toEqual(await listAt(fork.url, LISTS[0], v));
      const rv = await labelEvent(server.url, 'e1', { step: 'branch-of-branch' }, NS);
      expect(rv).toBe(branchHead + 1);
      // The first fork goes on by itself.
      expect((await call(fork.url, 'GET', `${EVENTS}/namespaces/${NS}/events/e1`)).body.metadata.labels.step).toBe('branch');
    } finally {
      await server.close();
    }
  });
});

describe('bad input: one line, exit status 1, nothing written', () => {
  const refused = async (args: string[], message: RegExp, target: string) => {
    const r = await run('fork', ...args, '--data-dir', target);
    expect([r.code, r.out]).toEqual([1, '']);
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    return r;
  };
  const gone = (target: string) => expect(existsSync(target)).toBe(false);
  const noLeftovers = async () => expect((await readdir(work)).filter((f) => f.includes('.forking-'))).toEqual([]);

  it("a version past the recording's end or below its start", async () => {
    const target = join(work, 'never-1');
    await refused([recording, '--at', String(head + 1)], new RegExp(`^orchd fork: --at ${head + 1}: not written yet: the newest version is ${head}\\n$`), target);
    await refused([recording, '--at', String(start - 1)], new RegExp(`^orchd fork: --at ${start - 1}: before the recording: it starts with the state at version ${start}\\n$`), target);
    await refused([recording, '--at', '2001-01-01T00:00:00Z'], /^orchd fork: --at 2001-01-01T00:00:00.000Z: nothing was committed at or before then\n$/, target);
    gone(target);
  });

  it('a truncated or corrupt recording, also where the damage lies past the fork point', async () => {
    const bytes = await readFile(recording);
    const target = join(work, 'never-2');
    const cut = join(work, 'cut.orchlog');
    await writeFile(cut, bytes.subarray(0, bytes.length - 30));
    await refused([cut, '--at', String(start + 1)], /^orchd fork: \S+cut\.orchlog: truncated inside record/, target);
    const bad = Buffer.from(bytes);
    bad[bad.length - 200] ^= 0xff;
    const corrupt = join(work, 'corrupt.orchlog');
    await writeFile(corrupt, bad);
    await refused([corrupt, '--at', String(start + 1)], /^orchd fork: \S+corrupt\.orchlog: checksum mismatch in record \d+/, target);
    await writeFile(corrupt, Buffer.from('not a recording at all'));
    await refused([corrupt, '--at', '1'], /not an orchd recording/, target);
    gone(target);
    await noLeftovers();
  });

  it("a target folder that exists and is not empty, a running server's among them", async () => {
    const target = join(work, 'occupied');
    await mkdir(target);
    await writeFile(join(target, 'notes.txt'), 'mine');
    await refused([recording, '--at', String(n)], /^orchd fork: --data-dir \S+occupied: the folder exists and is not empty; a fork is made into a new or empty folder\n$/, target);
    expect(await readdir(target)).toEqual(['notes.txt']);
    const before = await readdir(join(original.dataDir, 'log'));
    await refused([recording, '--at', String(n)], /the folder exists and is not empty/, original.dataDir);
    expect(await readdir(join(original.dataDir, 'log'))).toEqual(before);
    // An empty folder is fine.
    const empty = join(work, 'empty');
    await mkdir(empty);
    expect((await run('fork', recording, '--at', String(n), '--data-dir', empty)).code).toBe(0);
    expect((await readForkPoints(empty))[0].at).toBe(n);
  });

  it('a KMS plugin that does not answer: nor are the folders the fork would have been made in left', async () => {
    const config = join(work, 'kms.yaml');
    await writeFile(config, eventsConfig(kmsProvider('down', `unix://${join(work, 'no-plugin.sock')}`)));
    await refused([recording, '--at', String(n), '--encryption-provider-config', config], /^orchd fork: the KMS plugins did not answer within 30 s: /, join(work, 'kdeep', 'p', 'q'));
    gone(join(work, 'kdeep'));
    await noLeftovers();
  }, 90_000);

  it('a source folder with no log, and a mistake in the command line (exit status 2)', async () => {
    const target = join(work, 'never-3');
    await refused(['--source-data-dir', join(work, 'nothing-here'), '--at', '1'], /no orchd log there/, target);
    const both = await run('fork', recording, '--source-data-dir', original.dataDir, '--at', '1', '--data-dir', target);
    expect([both.code, both.err.split('\n')[0]]).toEqual([2, 'orchd fork: give exactly one source: a RECORDING or --source-data-dir']);
    const noAt = await run('fork', recording, '--data-dir', target);
    expect([noAt.code, noAt.err.split('\n')[0]]).toEqual([2, 'orchd fork: --at RV|TIME|HEAD is required']);
    gone(target);
    await noLeftovers();
  });
});
