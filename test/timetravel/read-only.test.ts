import { execFileSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderBytes, mtimes, setWritable } from '../helpers/folder-contents.js';
import { call, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { EVENTS, createEvent, createNamespace, labelEvent } from '../watch/objects.js';
import { run, type Run } from './helpers.js';

/*
 * Reads that never write (issue 40): every time-travel command that reads a stopped data folder
 * leaves every byte and modification time of it as it was, and answers the same from a copy of it
 * that cannot be written. Tests run as root, whom permission bits do not stop, so the copy is made
 * immutable (chattr +i: not even root may write, create or delete in it); as another user, a-w.
 */

const NS = 'ro';
let dataDir: string;
let work: string;
let readOnly: string;
const rv: Record<string, number> = {};

beforeAll(async () => {
  work = tempDir('orchd-tt-ro-');
  dataDir = join(work, 'data');
  // Two servers one after the other: the first's stop writes a checkpoint, so the folder holds a
  // checkpoint file and a log tail after it, as a folder that has run for a while does.
  const first = await startServer({ dataDir });
  try {
    await createNamespace(first.url, NS);
    rv.a = await createEvent(first.url, 'a', NS, { step: '1' });
    rv.b = await createEvent(first.url, 'b', NS, { step: '1' });
    rv.a2 = await labelEvent(first.url, 'a', { step: '2' }, NS);
  } finally {
    await first.close();
  }
  const second = await startServer({ dataDir });
  try {
    rv.a3 = await labelEvent(second.url, 'a', { step: '3' }, NS);
    expect((await call(second.url, 'DELETE', `${EVENTS}/namespaces/${NS}/events/b`)).status).toBe(200);
    rv.c = await createEvent(second.url, 'c', NS, { step: '1' });
  } finally {
    await second.close();
  }
  readOnly = join(work, 'read-only');
  cpSync(dataDir, readOnly, { recursive: true, preserveTimestamps: true });
  setWritable(readOnly, false);
}, 60_000);

afterAll(() => {
  // chattr +i would stop the temp folder's removal.
  if (readOnly) setWritable(readOnly, true);
});

/** Each reading command, on the data folder dir; out is what it answers (a file it writes, for export and fork). */
const COMMANDS: Record<string, (dir: string, tag: string) => Promise<Run>> = {
  log: (dir) => run('log', '--data-dir', dir, '-o', 'json'),
  'state --at': (dir) => run('state', '--data-dir', dir, '--at', String(rv.a2), '-o', 'json'),
  'state at the head': (dir) => run('state', '--data-dir', dir, '--at', 'HEAD', '--kind', 'events', '-n', NS, '-o', 'yaml'),
  history: (dir) => run('history', 'events/a', '-n', NS, '--data-dir', dir, '-o', 'json-patch'),
  diff: (dir) => run('diff', '--data-dir', dir, String(rv.a), 'HEAD', '-o', 'json-patch'),
  export: async (dir, tag) => {
    const file = join(work, `export-${tag}.orchlog`);
    const r = await run('export', '--data-dir', dir, '--file', file);
    expect([r.code, r.out]).toEqual([0, '']);
    // What the recording holds, not when it was made (its header has the time of the export).
    const entries = await run('log', '--file', file, '-o', 'json');
    const state = await run('state', '--file', file, '--at', String(rv.a), '-o', 'json');
    return { code: entries.code + state.code, out: entries.out + state.out, err: r.err.replaceAll(file, 'FILE') + entries.err + state.err };
  },
  fork: async (dir, tag) => {
    const target = join(work, `fork-${tag}`);
    const r = await run('fork', '--source-data-dir', dir, '--at', String(rv.a3), '--data-dir', target);
    expect([r.code, r.err]).toEqual([0, '']);
    // What the fork answers, not where it came from (fork.json names its source).
    return run('log', '--data-dir', target, '-o', 'json');
  },
};

describe('reads of a stopped data folder never write to it', () => {
  it('log, state, history, diff, export and fork leave every byte and modification time as they were', async () => {
    const bytes = await folderBytes(dataDir);
    const times = mtimes(dataDir);
    for (const [name, command] of Object.entries(COMMANDS)) {
      const r = await command(dataDir, 'original');
      // diff answers 1 when its sides differ, as diff(1) does: they do here.
      expect([name, r.code]).toEqual([name, name === 'diff' ? 1 : 0]);
      expect([name, mtimes(dataDir)]).toEqual([name, times]);
      expect([name, (await folderBytes(dataDir)).equals(bytes)]).toEqual([name, true]);
    }
  });

  it('every command answers from a copy that cannot be written exactly as from the original', async () => {
    const times = mtimes(readOnly);
    for (const [name, command] of Object.entries(COMMANDS)) {
      const original = await command(dataDir, `${name}-a`);
      const copy = await command(readOnly, `${name}-b`);
      expect([name, copy.code, copy.err.replaceAll(readOnly, 'DIR')]).toEqual([name, name === 'diff' ? 1 : 0, original.err.replaceAll(dataDir, 'DIR')]);
      expect(copy.out.length).toBeGreaterThan(0);
      expect([name, copy.out === original.out]).toEqual([name, true]);
    }
    expect(mtimes(readOnly)).toEqual(times);
  });
});

describe('a folder whose log cannot be opened: one line naming it, exit status 1', () => {
  const refusal = (r: Run) => [r.code, r.out, r.err.trimEnd().split('\n').length];

  it('a log folder with no LevelDB log in it', async () => {
    const dir = tempDir('orchd-tt-ro-empty-');
    cpSync(dataDir, dir, { recursive: true });
    execFileSync('rm', [join(dir, 'log', 'CURRENT')]);
    const r = await run('log', '--data-dir', dir);
    expect(refusal(r)).toEqual([1, '', 1]);
    expect(r.err).toBe(`orchd log: --data-dir ${dir}: cannot read its log (${join(dir, 'log')}): no LevelDB log there (no CURRENT file)\n`);
  });

  it('a damaged LevelDB log says what LevelDB found, not "Database failed to open"', async () => {
    const dir = tempDir('orchd-tt-ro-bad-');
    cpSync(dataDir, dir, { recursive: true });
    writeFileSync(join(dir, 'log', 'CURRENT'), 'MANIFEST-999999\n');
    const r = await run('history', 'events/a', '-n', NS, '--data-dir', dir);
    expect(refusal(r)).toEqual([1, '', 1]);
    expect(r.err).toMatch(new RegExp(`^orchd history: --data-dir ${dir}: its log \\(${join(dir, 'log')}\\) cannot be opened: .*MANIFEST-999999`));
    expect(r.err).not.toContain('Database failed to open');
  });
});
