/**
 * The vitest run's global setup: before the first test, the tools the suites drive are all there
 * (test/setup/system-packages.sh --check: the one list, which `npm test` installs from first), so
 * that a missing one stops the run with one line instead of failing or skipping tests one by one.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PACKAGES = fileURLToPath(new URL('./system-packages.sh', import.meta.url));

export default function setup(): void {
  const r = spawnSync('bash', [PACKAGES, '--check'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr.trim() || `${PACKAGES} --check failed`);
}
