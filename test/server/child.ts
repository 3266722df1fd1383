import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundlePackage } from '../../tools/bundle-package.js';
import { sleep } from '../helpers/poll.js';

/*
 * The real orchd as a child process, for the tests that need a process: kill -9, SIGTERM, replay
 * while serving, the command line. Node 20 cannot run TypeScript, so src is compiled (as
 * `npm run build` compiles it, declarations too: test/embed/package.test.ts installs this same build)
 * into a cache folder named by the hash of the sources: a stale build is never run. One worker builds (under a lock) into a temporary folder and renames it
 * into place, so no child ever sees a half-written build.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/orchd-server-test');
const BUILD_CONFIG = join(ROOT, 'test/server/fixtures/tsconfig.json');

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

async function sourceHash(): Promise<string> {
  const h = createHash('sha256');
  // tools/ too: the command line loads the time-travel commands from there.
  for (const f of [join(ROOT, 'tsconfig.json'), join(ROOT, 'tsconfig.build.json'), BUILD_CONFIG, ...(await sourceFiles(join(ROOT, 'src'))), ...(await sourceFiles(join(ROOT, 'tools')))]) {
    h.update(f.slice(ROOT.length))
      .update('\0')
      .update(await readFile(f))
      .update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** One build at a time across the vitest workers (and concurrent runs): a directory made atomically. */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(CACHE, 'build.lock');
  await mkdir(CACHE, { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      // Left by a run that was killed mid-build.
      if (since > 180_000) await rm(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} held for too long`);
      else await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function build(): Promise<string> {
  const dir = join(CACHE, await sourceHash());
  const cli = join(dir, 'src/cli.js');
  if (await exists(cli)) return cli;
  return withBuildLock(async () => {
    if (await exists(cli)) return cli;
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    try {
      // --noCheck: emit only; `npm test` type-checks, and another room's unfinished types must not
      // stop these tests.
      await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', BUILD_CONFIG, '--outDir', tmp, '--noCheck'], {
        cwd: ROOT,
        timeout: 120_000,
      });
    } catch (err) {
      // Errors that still emitted JavaScript are left to the type-check; a build with no server is not.
      if (!(await exists(cli.replace(dir, tmp)))) throw err;
    }
    await rename(tmp, dir);
    // Builds of older sources, left by earlier runs.
    for (const name of await readdir(CACHE)) {
      const p = join(CACHE, name);
      if (p !== dir && name !== 'build.lock' && Date.now() - (await stat(p)).mtimeMs > 3_600_000) await rm(p, { recursive: true, force: true });
    }
    return cli;
  });
}

let built: Promise<string> | undefined;
/** Path of the compiled cli.js for the current sources (ORCHD_TEST_CLI=<cli.js> runs that one instead, e.g. dist's). */
export const builtCli = (): Promise<string> => (built ??= process.env.ORCHD_TEST_CLI ? Promise.resolve(process.env.ORCHD_TEST_CLI) : build());

/** The bundles `npm run build` makes (tools/bundle-package.ts), beside the build. */
async function bundle(): Promise<string> {
  const dist = dirname(dirname(await builtCli()));
  const out = join(dist, 'package');
  if (await exists(join(out, 'cli.js'))) return out;
  return withBuildLock(async () => {
    if (await exists(join(out, 'cli.js'))) return out;
    const tmp = `${out}.tmp-${process.pid}-${Date.now()}`;
    await bundlePackage([join(dist, 'src/index.js'), join(dist, 'src/cli.js')], tmp);
    await rename(tmp, out);
    return out;
  });
}

let bundled: Promise<string> | undefined;
/** The folder of the package's entry and command as installed (index.js, cli.js) for the current sources. */
export const builtPackage = (): Promise<string> => (bundled ??= bundle());

/** One structured log line of the server (src/observability/logger.ts). */
export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Child {
  readonly pid: number;
  readonly process: ChildProcess;
  /** Every JSON line the server wrote to stderr, in order. */
  readonly lines: LogLine[];
  /** Raw output, for failure messages and the lines that are not JSON. */
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<Exit>;
  /** The first log line (already seen or still to come) that pred accepts; rejects on exit or after ms. */
  waitForLine(pred: (l: LogLine) => boolean, ms?: number): Promise<LogLine>;
  signal(sig: NodeJS.Signals): void;
}

const children = new Set<Child>();

/** Runs `node <cli> ...args`; the child is SIGKILLed after lifeMs whatever happens. */
export const spawnCli = (cli: string, args: string[], opts: { cwd?: string; lifeMs?: number; env?: NodeJS.ProcessEnv } = {}): Child => spawnProcess(process.execPath, [cli, ...args], opts);

/** Runs command (not through a shell); the child is SIGKILLed after lifeMs whatever happens. */
export function spawnProcess(command: string, args: string[], opts: { cwd?: string; lifeMs?: number; env?: NodeJS.ProcessEnv } = {}): Child {
  const proc = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error('spawn failed');
  const pid = proc.pid;
  const lines: LogLine[] = [];
  const output = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  let partial = '';
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => (output.stdout += c));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
    output.stderr += c;
    const parts = (partial + c).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        // not a log line (usage text, a crash trace): kept in output.stderr
      }
    }
    for (const w of waiters) w();
  });
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    proc.on('close', (code, signal) => {
      done = true;
      clearTimeout(deadline);
      children.delete(child);
      for (const w of waiters) w();
      resolve({ code, signal });
    });
  });
  const signal = (sig: NodeJS.Signals) => {
    if (!done && proc.exitCode === null && proc.signalCode === null) process.kill(pid, sig);
  };
  const deadline = setTimeout(() => signal('SIGKILL'), opts.lifeMs ?? 60_000);
  const child: Child = {
    pid,
    process: proc,
    lines,
    output,
    exited,
    signal,
    waitForLine(pred, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(pred);
          if (found || done) {
            waiters.delete(check);
            clearTimeout(timer);
            if (found) resolve(found);
            else reject(new Error(`server exited before the expected log line\n${output.stderr}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such log line after ${ms} ms\n${output.stderr}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
  children.add(child);
  return child;
}

/** SIGKILLs every child still running (afterAll), and waits for them to go. */
export async function killAll(): Promise<void> {
  const all = [...children];
  for (const c of all) c.signal('SIGKILL');
  await Promise.all(all.map((c) => c.exited));
}

export interface ServerChild extends Child {
  /** http://127.0.0.1:<port>, from the `listening` line (before the replay). */
  url: string;
}

/**
 * `orchd serve` on 127.0.0.1, a free port, dataDir; resolves once it listens (not yet ready).
 * crashPoint arms ORCHD_CRASH_POINT (src/log/crash-point.ts) in the child, and only there.
 */
export async function spawnServer(dataDir: string, extra: string[] = [], opts: { lifeMs?: number; crashPoint?: string } = {}): Promise<ServerChild> {
  const cli = await builtCli();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ORCHD_CRASH_POINT;
  if (opts.crashPoint) env.ORCHD_CRASH_POINT = opts.crashPoint;
  const child = spawnCli(cli, ['serve', '--port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir, ...extra], { lifeMs: opts.lifeMs, env });
  const listening = await child.waitForLine((l) => l.msg === 'listening');
  return Object.assign(child, { url: String(listening.url) });
}

export const isReady = (l: LogLine) => l.msg === 'ready';

export interface Reply {
  status: number;
  body: any;
}

/** One request on a keep-alive agent; the body is parsed as JSON when it is JSON. */
export function request(agent: Agent, base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(base + path, { method, agent, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', reject);
      res.on('end', () => {
        if (!res.complete) return reject(new Error('response cut short'));
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // plain text (health checks)
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

export const keepAlive = (sockets: number) => new Agent({ keepAlive: true, maxSockets: sockets });
