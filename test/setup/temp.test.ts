/**
 * The run's temp folder and test/helpers' temp folders and polling: folders made in a test are gone
 * after it, the run's temp folder is its own, and a run that leaves anything in it fails, naming it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const forTheFile = tempDir('orchd-file-');

describe('temp folders', () => {
  let made = '';

  it("are made in the run's own temp folder", () => {
    made = tempDir('orchd-one-test-');
    expect(existsSync(made)).toBe(true);
    expect(dirname(made)).toBe(tmpdir());
    expect(basename(tmpdir())).toMatch(/^orchd-vitest-/);
  });

  it('made in a test are gone once it has ended; made outside one, once the file has', () => {
    expect(made).not.toBe('');
    expect(existsSync(made)).toBe(false);
    expect(existsSync(forTheFile)).toBe(true);
  });

  it('a run that leaves something in its temp folder fails, naming it', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(ROOT, 'test/setup/fixtures/vitest.config.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ORCHD_LEAVE: 'left-by-the-fixture' },
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/the tests left 1 entries in their temp folder \(.*\): left-by-the-fixture/);
  });
});

describe('eventually', () => {
  it('gives what the check gave once it holds', async () => {
    let n = 0;
    expect(await eventually(() => ++n >= 3 && n, { stepMs: 1 })).toBe(3);
  });

  it('fails at its deadline, naming what it waited for', async () => {
    await expect(eventually(() => false, { timeoutMs: 30, what: 'the sky falling' })).rejects.toThrow('the sky falling not met within 30 ms');
  });
});
