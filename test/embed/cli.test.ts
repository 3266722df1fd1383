/**
 * `orchd serve --storage memory` and `orchd kubeconfig` as a user runs them, with kubectl reading
 * the kubeconfig the command prints (and the one startOrchd gives).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchd } from '../../src/index.js';
import { builtCli } from '../config/built-cli.js';
import { KUBECTL, type Ran } from '../helpers/kubectl.js';
import { isReady, killAll, spawnCli } from '../server/child.js';
import { tempDir } from '../helpers/temp.js';

let cli: string;
let home: string;

beforeAll(async () => {
  cli = await builtCli();
  home = tempDir('orchd-embed-cli-');
}, 120_000);

afterAll(async () => {
  await killAll();
});

/** Runs a command to its end (bounded to 30 s) with HOME in the test's folder. */
const run = (file: string, args: string[], cwd = home): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 30_000, env: { ...process.env, HOME: home } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });

const kubectl = (kubeconfig: string, args: string[]) => run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', join(home, 'cache'), ...args]);

const eventYaml = (name: string) => `apiVersion: events.orch.io/v1
kind: Event
metadata: {name: ${name}, namespace: default}
eventTime: "2026-01-02T03:04:05.000000Z"
reportingController: example.com/cli
reportingInstance: cli-0
action: Test
reason: Created
type: Normal
`;

/** `orchd serve --storage memory` in an empty folder of its own; its URL from the `listening` line. */
async function serveMemory(cwd: string) {
  const child = spawnCli(cli, ['serve', '--storage', 'memory', '--port', '0'], { cwd });
  const listening = await child.waitForLine((l) => l.msg === 'listening');
  await child.waitForLine(isReady);
  expect(listening.storage).toBe('memory');
  return { child, url: listening.url as string };
}

describe('orchd serve --storage memory, orchd kubeconfig, kubectl', () => {
  it('serves from memory, writes nothing to disk, and starts empty again after a restart', async () => {
    const cwd = await mkdtemp(join(home, 'serve-'));
    const first = await serveMemory(cwd);
    const printed = await run(process.execPath, [cli, 'kubeconfig', '--server', first.url]);
    expect(printed.code).toBe(0);
    const kubeconfig = join(home, 'kc.yaml');
    await writeFile(kubeconfig, printed.stdout);
    const manifest = join(home, 'event.yaml');
    await writeFile(manifest, eventYaml('from-kubectl'));
    expect(await kubectl(kubeconfig, ['create', '-f', manifest])).toMatchObject({ code: 0, stdout: 'event.events.orch.io/from-kubectl created\n' });
    const got = await kubectl(kubeconfig, ['get', 'events.events.orch.io', '-n', 'default', '-o', 'name']);
    expect(got).toMatchObject({ code: 0, stdout: 'event.events.orch.io/from-kubectl\n' });
    first.child.signal('SIGTERM');
    expect((await first.child.exited).code).toBe(0);
    // No data folder, no continue-token key: the memory log leaves nothing behind.
    expect(await readdir(cwd)).toEqual([]);

    const second = await serveMemory(cwd);
    await writeFile(kubeconfig, (await run(process.execPath, [cli, 'kubeconfig', '--server', second.url])).stdout);
    const empty = await kubectl(kubeconfig, ['get', 'events.events.orch.io', '-n', 'default', '-o', 'name']);
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect((await kubectl(kubeconfig, ['get', 'namespaces', '-o', 'name'])).stdout).toContain('namespace/default\n');
    second.child.signal('SIGTERM');
    expect((await second.child.exited).code).toBe(0);
  });

  it("kubectl reads startOrchd's kubeconfig()", async () => {
    const api = await startOrchd();
    try {
      const kubeconfig = join(home, 'embed.yaml');
      await writeFile(kubeconfig, api.kubeconfigYaml());
      const manifest = join(home, 'embed-event.yaml');
      await writeFile(manifest, eventYaml('from-embed'));
      expect((await kubectl(kubeconfig, ['apply', '-f', manifest])).code).toBe(0);
      expect((await api.history('events', 'default', 'from-embed')).map((v) => v.type)).toEqual(['ADDED']);
    } finally {
      await api.stop();
    }
  });
});

describe('the command line refuses what it cannot do', () => {
  it('--storage must be leveldb, memory or etcd (usage error, status 2)', async () => {
    const r = await run(process.execPath, [cli, 'serve', '--storage', 'disk', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('orchd serve: --storage: "disk" is not one of leveldb, memory, etcd');
  });

  it('orchd kubeconfig: the default server, a CA file and a token are written; a bad URL or a missing file is refused', async () => {
    const plain = await run(process.execPath, [cli, 'kubeconfig']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('server: http://127.0.0.1:8080\n');
    expect(plain.stdout).toContain('insecure-skip-tls-verify: true');
    const ca = join(home, 'ca.pem');
    await writeFile(ca, 'PEM');
    const tls = await run(process.execPath, [cli, 'kubeconfig', '--server', 'https://127.0.0.1:6443', '--certificate-authority', ca, '--token', 't0k']);
    expect(tls.stdout).toContain(`certificate-authority-data: ${Buffer.from('PEM').toString('base64')}\n`);
    expect(tls.stdout).toContain('token: t0k\n');
    expect(tls.stdout).not.toContain('insecure-skip-tls-verify');
    const bad = await run(process.execPath, [cli, 'kubeconfig', '--server', 'ftp://example.com']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--server: "ftp://example.com" is not a server URL');
    const missing = await run(process.execPath, [cli, 'kubeconfig', '--server', 'https://127.0.0.1:6443', '--certificate-authority', join(home, 'none.pem')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('none.pem: no such file');
  });
});
