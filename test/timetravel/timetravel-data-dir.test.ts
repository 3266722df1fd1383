import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import { checkpointRevisions } from '../../src/store/checkpoint-reader.js';
import { snapshotLogFolder } from '../../src/timetravel/sources/log-snapshot.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { run } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

/*
 * How a data folder is read (src/timetravel/sources/data-dir.ts): a hard-linked snapshot of its log
 * folder, and one object's history from the checkpoint file's index plus the log after it. The
 * object is written before a checkpoint (a server stopped) and after it (a second server, still
 * running while the commands read its folder).
 */

const NS = 'tt-dd';
const KEY = `events.orch.io/events/${NS}/h1`;
let dataDir: string;
let server: TestServer;
const rv: Record<string, number> = {};

beforeAll(async () => {
  dataDir = tempDir('orchd-tt-dd-');
  const first = await startServer({ dataDir });
  await createNamespace(first.url, NS);
  rv.created = await createEvent(first.url, 'h1', NS, { step: '1' });
  // Around h1 in key order: one kept, one deleted after the checkpoint, one in another namespace.
  rv.a0 = await createEvent(first.url, 'a0', NS, { side: 'a' });
  rv.z9 = await createEvent(first.url, 'z9', NS, { side: 'z' });
  rv.other = await createEvent(first.url, 'h1', 'default', { step: '1' });
  rv.labelled = await labelEvent(first.url, 'h1', { step: '2' }, NS);
  // Stopping checkpoints: what came before is in the checkpoint file, what comes next only in the log.
  await first.close();
  server = await startServer({ dataDir });
  rv.relabelled = await labelEvent(server.url, 'h1', { step: '3' }, NS);
  const del = await call(server.url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/h1`);
  expect(del.status).toBe(200);
  rv.deleted = Number((await call(server.url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.metadata.resourceVersion);
  rv.recreated = await createEvent(server.url, 'h1', NS, { step: '4' });
  // Only in the log's tail: a new key between the checkpoint's, and a delete of one of them.
  rv.m5 = await createEvent(server.url, 'm5', NS, { side: 'm' });
  expect((await call(server.url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/z9`)).status).toBe(200);
  rv.z9gone = Number((await call(server.url, 'GET', `${EVENTS}/namespaces/${NS}/events`)).body.metadata.resourceVersion);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const patches = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { resourceVersion: string; type: string; patch: unknown[] });

describe('history of one object from a data folder', () => {
  it('the checkpoint file holds the revisions written before it, found without loading it', () => {
    const found = checkpointRevisions(checkpointFile(join(dataDir, 'log')), KEY);
    expect(found?.seq).toBeGreaterThanOrEqual(rv.labelled);
    expect(found?.seq).toBeLessThan(rv.relabelled);
    expect(found?.revisions).toEqual([rv.created, rv.labelled]);
    expect(checkpointRevisions(checkpointFile(join(dataDir, 'log')), `events.orch.io/events/${NS}/absent`)?.revisions).toEqual([]);
    expect(checkpointRevisions(join(dataDir, 'no-such-file'), KEY)).toBeUndefined();
  });

  it('every version, before the checkpoint and after it, a delete and a create again, each with its change', async () => {
    const dir = await run('history', '--data-dir', dataDir, 'events/h1', '-n', NS, '-o', 'json-patch');
    expect([dir.code, dir.err]).toEqual([0, '']);
    const seen = patches(dir.out);
    expect(seen.map((p) => `${p.type} ${p.resourceVersion}`)).toEqual([
      `ADDED ${rv.created}`,
      `MODIFIED ${rv.labelled}`,
      `MODIFIED ${rv.relabelled}`,
      `DELETED ${rv.deleted}`,
      `ADDED ${rv.recreated}`,
    ]);
    expect(seen[0].patch).toEqual([{ op: 'add', path: '', value: expect.objectContaining({ metadata: expect.objectContaining({ name: 'h1', labels: { step: '1' } }) }) }]);
    expect(seen[2].patch).toContainEqual({ op: 'replace', path: '/metadata/labels/step', value: '3' });
    expect(seen[3].patch).toEqual([{ op: 'remove', path: '' }]);
    expect(seen[4].patch).toEqual([{ op: 'add', path: '', value: expect.objectContaining({ metadata: expect.objectContaining({ labels: { step: '4' } }) }) }]);
  });
});

describe('the state at a version from the checkpoint file and the log after it', () => {
  const both = async (command: string, ...args: string[]) => ({ dir: await run(command, '--data-dir', dataDir, ...args), api: await run(command, '--server', server.url, ...args) });

  it('every version, before the checkpoint (an older revision read from the log) and after it (the tail over it), is what the server answers', async () => {
    const versions = [rv.created, rv.a0, rv.labelled, rv.relabelled, rv.deleted, rv.recreated, rv.m5, rv.z9gone];
    for (const at of versions) {
      for (const o of ['json', 'yaml', 'table']) {
        const { dir, api } = await both('state', '--at', String(at), '-o', o);
        expect([dir.code, dir.err]).toEqual([0, '']);
        expect(dir.out).toBe(api.out);
      }
    }
    const names = (at: number) =>
      run('state', '--data-dir', dataDir, '--at', String(at), '--kind', 'events', '-n', NS, '-o', 'json').then((r) =>
        r.out
          .trim()
          .split('\n')
          .map((l) => {
            const o = JSON.parse(l);
            return `${o.metadata.name} ${o.metadata.resourceVersion}`;
          }),
      );
    expect(await names(rv.labelled - 1)).toEqual([`a0 ${rv.a0}`, `h1 ${rv.created}`, `z9 ${rv.z9}`]);
    expect(await names(rv.deleted)).toEqual([`a0 ${rv.a0}`, `z9 ${rv.z9}`]);
    expect(await names(rv.z9gone)).toEqual([`a0 ${rv.a0}`, `h1 ${rv.recreated}`, `m5 ${rv.m5}`]);
  });

  it('keeps the filters: kind, namespace, label selector', async () => {
    for (const filter of [
      ['--kind', 'events'],
      ['-n', NS],
      ['-n', 'default', '--kind', 'events'],
      ['-l', 'side in (a,m)'],
      ['--kind', 'namespaces', '-l', 'kubernetes.io/metadata.name=default'],
    ]) {
      const { dir, api } = await both('state', '--at', String(rv.m5), ...filter, '-o', 'json');
      expect([dir.code, dir.err, filter]).toEqual([0, '', filter]);
      expect(dir.out).toBe(api.out);
      expect(dir.out).not.toBe('');
    }
    const bySide = await run('state', '--data-dir', dataDir, '--at', String(rv.m5), '-l', 'side in (a,m)', '-o', 'json');
    expect(
      bySide.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).metadata.name),
    ).toEqual(['a0', 'm5']);
  });

  it('a diff across the checkpoint reads both states side by side, the same as from the server', async () => {
    for (const o of ['diff', 'json-patch']) {
      const { dir, api } = await both('diff', String(rv.labelled), String(rv.z9gone), '-o', o);
      expect([dir.code, dir.err, api.code]).toEqual([1, '', 1]);
      expect(dir.out).toBe(api.out);
    }
    const changed = (await run('diff', '--data-dir', dataDir, String(rv.labelled), String(rv.z9gone), '-o', 'json-patch')).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).object);
    // a0 and the other namespace's h1 did not change: not printed (nor decoded).
    expect(changed).toEqual([`events.events.orch.io/${NS}/h1`, `events.events.orch.io/${NS}/m5`, `events.events.orch.io/${NS}/z9`]);
  });
});

describe('the snapshot of a log folder a server is writing', () => {
  it('links the table files (the same inode), copies the rest, and opens with every acknowledged entry', async () => {
    const to = tempDir('orchd-tt-snap-');
    const folder = join(dataDir, 'log');
    const head = rv.recreated;
    await snapshotLogFolder(folder, join(to, 'log'));
    const names = await readdir(join(to, 'log'));
    expect(names).not.toContain('LOCK');
    const tables = names.filter((n) => n.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(0);
    for (const n of tables) {
      const [a, b] = await Promise.all([stat(join(folder, n)).catch(() => undefined), stat(join(to, 'log', n))]);
      // A table the server's compaction removed meanwhile is the snapshot's alone.
      if (a) expect(b.ino).toBe(a.ino);
    }
    for (const n of names.filter((x) => x === 'CURRENT' || x.startsWith('MANIFEST-') || x.endsWith('.log'))) {
      const [a, b] = await Promise.all([stat(join(folder, n)).catch(() => undefined), stat(join(to, 'log', n))]);
      if (a) expect(b.ino).not.toBe(a.ino);
    }
    const log = new LevelDbLog({ path: join(to, 'log') });
    await log.open();
    try {
      expect(log.lastSeq).toBeGreaterThanOrEqual(head);
      expect((await log.get(head))?.key).toBe(KEY);
    } finally {
      await log.close();
    }
  });
});
