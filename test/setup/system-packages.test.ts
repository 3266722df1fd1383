/**
 * test/setup/system-packages.sh, the one list of what the tests need besides npm's packages: on this
 * machine everything is there; where something is missing and it may not install, it stops with one
 * line naming the packages and the command; `npm test` and .ci/run both go through it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./system-packages.sh', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['python3-kubernetes', 'chromium', 'etcd-server', 'prometheus'];

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

describe('the system packages the tests need', () => {
  it('are all installed here: the script says nothing and succeeds', () => {
    const r = run(['--check']);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('missing and not to be installed: one line naming every package and the command, exit 1', () => {
    const r = run(['--check'], { ORCHD_SYSTEM_ROOT: '/nonexistent/orchd-system-root' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`apt-get install -y ${PACKAGES.join(' ')}`);
  });

  it('is what npm test runs first and what .ci/run runs, which installs nothing by itself', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
    expect(pkg.scripts.pretest).toBe('bash test/setup/system-packages.sh');
    const ci = readFileSync(`${ROOT}.ci/run`, 'utf8');
    expect(ci).toContain('bash test/setup/system-packages.sh');
    expect(ci).not.toMatch(/apt-get/);
  });
});
