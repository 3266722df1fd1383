/**
 * Real kubectl for the test suites: where the binaries are, one way to run one (bounded, output
 * captured, never rejecting), and a kubectl home (kubeconfig, cache, HOME) so that kubectl talks to
 * nothing but the server under test and nothing leaks into the user's ~/.kube.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type TestServer } from './server.js';
import { removeDir, tempDir } from './temp.js';

/**
 * kubectl on PATH. Every machine of this kind has it (test/setup/system-packages.sh checks it before
 * the first test): a suite never skips for want of it.
 */
export const KUBECTL: string = (() => {
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'kubectl'))
    .find((p) => existsSync(p));
  if (!found) throw new Error('no kubectl on PATH (see test/setup/system-packages.sh)');
  return found;
})();

/** kubectl.1.27 … kubectl.1.33 live in the folder of the file the kubectl on PATH resolves to. */
const VERSIONED_DIR = dirname(realpathSync(KUBECTL));

/** The path of kubectl of one minor version ('1.27'). */
export function versionedKubectl(version: string): string {
  return join(VERSIONED_DIR, `kubectl.${version}`);
}

/** Every kubectl of this machine: the one on PATH (a dispatcher by server version), then each versioned one, oldest first. */
export function everyKubectl(): { label: string; path: string }[] {
  const versioned = readdirSync(VERSIONED_DIR)
    .filter((f) => /^kubectl\.1\.\d+$/.test(f))
    .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
    .map((f) => ({ label: f, path: join(VERSIONED_DIR, f) }));
  return [{ label: 'kubectl (default)', path: KUBECTL }, ...versioned];
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Which kubectl (default: the one on PATH). */
  binary?: string;
  /** Set over this process's environment. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Its standard input (default: empty). */
  stdin?: string;
  /** Killed (SIGKILL, by its PID) past this; default 30 s. */
  timeoutMs?: number;
}

/** Runs kubectl once. Resolves with its exit code (-1 when killed or not started) and output; never rejects. */
export function runKubectl(args: string[], o: RunOptions = {}): Promise<Ran> {
  const binary = o.binary ?? KUBECTL;
  return new Promise((resolve) => {
    const child = execFile(binary, args, { cwd: o.cwd, timeout: o.timeoutMs ?? 30_000, killSignal: 'SIGKILL', env: { ...process.env, ...o.env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end(o.stdin ?? '');
  });
}

export interface KubectlHome {
  /** A folder for kubectl's files (kubeconfig, cache, manifests), removed by remove(). */
  readonly home: string;
  /** The command line before the subcommand: --server, --kubeconfig, --cache-dir. */
  readonly base: string[];
  /** The environment kubectl runs with (HOME and KUBECONFIG in home). */
  readonly env: NodeJS.ProcessEnv;
  /** Runs kubectl against the server (stdin as its input, env set over the home's), bounded to 30 s. */
  kubectl(args: string[], stdin?: string, env?: NodeJS.ProcessEnv): Promise<Ran>;
  /** Writes a file into home and returns its path. */
  file(name: string, text: string): Promise<string>;
  remove(): Promise<void>;
}

/** An empty kubectl configuration for the server at url, in a fresh folder; kubectl runs in cwd (default: that folder). */
export async function kubectlHome(url: string, o: { binary?: string; cwd?: string } = {}): Promise<KubectlHome> {
  const home = tempDir('orchd-kubectl-', { until: 'file' });
  const kubeconfig = join(home, 'kubeconfig');
  await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  const base = ['--server', url, '--kubeconfig', kubeconfig, '--cache-dir', join(home, 'cache')];
  const env = { ...process.env, HOME: home, KUBECONFIG: kubeconfig };
  return {
    home,
    base,
    env,
    kubectl: (args, stdin, more) => runKubectl([...base, ...args], { binary: o.binary, cwd: o.cwd ?? home, stdin, env: { ...env, ...more } }),
    async file(name, text) {
      const path = join(home, name);
      await writeFile(path, text);
      return path;
    },
    remove: async () => removeDir(home),
  };
}

export interface KubectlSession extends Omit<KubectlHome, 'remove'> {
  readonly server: TestServer;
}

/**
 * One real server and an empty kubectl configuration for a whole test file: kubectl talks to
 * nothing but this server, with its own HOME and cache.
 */
export function kubectlForFile(opts?: Parameters<typeof startServer>[0]): KubectlSession {
  let server: TestServer | undefined;
  let session: KubectlHome | undefined;
  beforeAll(async () => {
    server = await startServer(opts);
    session = await kubectlHome(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await session?.remove();
  });
  const started = (): KubectlHome => {
    if (!session) throw new Error('the server starts in beforeAll');
    return session;
  };
  return {
    get server() {
      if (!server) throw new Error('the server starts in beforeAll');
      return server;
    },
    get home() {
      return started().home;
    },
    get base() {
      return started().base;
    },
    get env() {
      return started().env;
    },
    kubectl: (args, stdin, env) => started().kubectl(args, stdin, env),
    file: (name, text) => started().file(name, text),
  };
}

/** Runs at most max jobs at once; the rest wait their turn, in order. */
export function limiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(job: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await job();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
