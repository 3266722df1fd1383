/**
 * The vitest run's global setup. Before the first test: the tools the suites drive are all there
 * (test/setup/system-packages.sh --check: the one list, which `npm test` installs from first), so
 * that a missing one stops the run with one line instead of failing or skipping tests one by one.
 * The run gets a temp folder of its own (TMPDIR, inherited by the test workers and every process
 * they start), so that what it leaves behind is told apart from other processes using /tmp at the
 * same time: after the last test it must be empty, or the run fails naming what was left.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = fileURLToPath(new URL('./system-packages.sh', import.meta.url));

export default function setup(): () => void {
  const r = spawnSync('bash', [PACKAGES, '--check'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr.trim() || `${PACKAGES} --check failed`);
  const outer = process.env.TMPDIR;
  const runTemp = mkdtempSync(join(tmpdir(), 'orchd-vitest-'));
  process.env.TMPDIR = runTemp;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const left = readdirSync(runTemp).sort();
    rmSync(runTemp, { recursive: true, force: true });
    if (left.length === 0) return;
    // An error thrown here is printed, but vitest still exits 0: the exit code says it too.
    process.exitCode = 1;
    throw new Error(`the tests left ${left.length} entries in their temp folder (${runTemp}): ${left.slice(0, 20).join(', ')}`);
  };
}
