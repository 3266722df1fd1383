import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type TestServer } from './server.js';

/** kubectl on PATH, or undefined (the test files skip their kubectl suites then). */
export const KUBECTL = (process.env.PATH ?? '')
  .split(delimiter)
  .map((d) => join(d, 'kubectl'))
  .find((p) => existsSync(p));

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlSession {
  readonly server: TestServer;
  /** A folder for the session's files (kubeconfig, cache, manifests), removed afterwards. */
  readonly home: string;
  /** Runs kubectl against the server (stdin, when given, as its input), bounded to 30 s. */
  kubectl(args: string[], stdin?: string): Promise<Ran>;
  /** Writes a file into home and returns its path. */
  file(name: string, text: string): Promise<string>;
}

/**
 * One real server and an empty kubectl configuration for a whole test file: kubectl talks to
 * nothing but this server, with its own HOME and cache.
 */
export function kubectlForFile(opts?: Parameters<typeof startServer>[0]): KubectlSession {
  let server: TestServer | undefined;
  let home = '';
  let base: string[] = [];
  beforeAll(async () => {
    server = await startServer(opts);
    home = await mkdtemp(join(tmpdir(), 'orchd-kubectl-'));
    const kubeconfig = join(home, 'kubeconfig');
    await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
    base = ['--server', server.url, '--kubeconfig', kubeconfig, '--cache-dir', join(home, 'cache')];
  });
  afterAll(async () => {
    await server?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });
  return {
    get server() {
      if (!server) throw new Error('the server starts in beforeAll');
      return server;
    },
    get home() {
      return home;
    },
    kubectl: (args, stdin) =>
      new Promise((resolve) => {
        const child = execFile(KUBECTL!, [...base, ...args], { cwd: home, timeout: 30_000, env: { ...process.env, HOME: home } }, (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
        );
        child.stdin?.end(stdin ?? '');
      }),
    async file(name, text) {
      const path = join(home, name);
      await writeFile(path, text);
      return path;
    },
  };
}
