import { access, copyFile, mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, builtPackage, isReady, keepAlive, killAll, request, ROOT, spawnCli, spawnProcess, type Child } from './child.js';
import { tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/poll.js';

/*
 * The `orchd` command as a user runs it: `node <cli> serve …`, `npx orchd serve …` and `npm start`
 * in a package laid out as this one (its package.json, its dist), help, and mistakes on the command
 * line.
 */

let cli: string;
let root: string;
/** A copy of this package whose dist is the fresh build: where npx and npm start run. */
let pkg: string;
/** Servers started through npm/npx (grandchildren): their pids, until they are seen to stop. */
const grandchildren = new Set<number>();

beforeAll(async () => {
  cli = await builtCli();
  // package.json's bin is the bundled command.
  await builtPackage();
  root = tempDir('orchd-server-cli-');
  pkg = join(root, 'package');
  await mkdir(pkg);
  await copyFile(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  await symlink(dirname(dirname(cli)), join(pkg, 'dist'));
  // npx installs the package it runs (a link) into npm's cache, which needs its dependencies.
  await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
}, 120_000);

/** npm and npx with a cache of their own in the temp folder, so no run leaves anything in ~/.npm. */
const npmEnv = (): NodeJS.ProcessEnv => ({ ...process.env, npm_config_cache: join(root, 'npm-cache'), npm_config_update_notifier: 'false' });
afterAll(async () => {
  await killAll();
  for (const pid of grandchildren) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

function listen(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}
const closeServer = (s: Server) => new Promise<void>((r) => s.close(() => r()));

async function freePort(): Promise<number> {
  const s = (await listen(0))!;
  const port = (s.address() as { port: number }).port;
  await closeServer(s);
  return port;
}

/** Waits for the server under npm/npx to be ready, checks it serves, then stops it by its own pid. */
async function checkAndStop(child: Child, wantUrl?: RegExp, startMs?: number): Promise<void> {
  const listening = await child.waitForLine((l) => l.msg === 'listening', startMs);
  const pid = Number(listening.pid);
  grandchildren.add(pid);
  if (wantUrl) expect(listening.url).toMatch(wantUrl);
  await child.waitForLine(isReady);
  const agent = keepAlive(1);
  const readyz = await request(agent, String(listening.url), 'GET', '/readyz');
  agent.destroy();
  expect(readyz.status).toBe(200);
  process.kill(pid, 'SIGTERM');
  expect(await child.exited, child.output.stderr).toEqual({ code: 0, signal: null });
  grandchildren.delete(pid);
  expect(child.lines.some((l) => l.msg === 'stopped')).toBe(true);
}

describe('orchd command line', () => {
  it.each([[['serve', '--help']], [['serve', '-h']]])('orchd %j prints the usage on stdout and exits 0', async (args) => {
    const child = spawnCli(cli, args, { cwd: root });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output.stdout).toContain('usage: orchd serve');
    for (const flag of ['--port', '--bind-address', '--data-dir', '--event-ttl']) expect(child.output.stdout).toContain(flag);
    // The defaults the README's `npm start` serves with.
    expect(child.output.stdout).toMatch(/^ +--port PORT +.*\(default 8080\)$/m);
    expect(child.output.stdout).toMatch(/^ +--bind-address ADDRESS +.*\(default 127\.0\.0\.1\)$/m);
    expect(child.output.stdout).toMatch(/^ +--data-dir DIR +.*\(default \.\/data;/m);
    expect(child.output.stderr).toBe('');
  });

  it.each([[['--help']], [['-h']], [[]]])('orchd %j lists the commands, one line each, and points to serve --help for its flags', async (args) => {
    const child = spawnCli(cli, args, { cwd: root });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output.stdout).toMatch(/^usage: orchd COMMAND/);
    expect(child.output.stdout).toMatch(/^ {2}serve +Serve the orch\.io API/m);
    expect(child.output.stdout).toContain("'orchd serve --help'");
    expect(child.output.stdout).not.toContain('--bind-address');
    expect(child.output.stderr).toBe('');
  });

  it.each([
    [['serve', '--nope'], "'--nope'"],
    [['serve', '--port', 'http'], '--port: "http" is not a port number'],
    [['serve', '--port', '70000'], '--port: "70000" is not a port number'],
    [['serve', '--port'], "'--port <value>' argument missing"],
    [['serve', '--event-ttl', 'soon'], '--event-ttl: "soon" is not a duration'],
    [['serve', '--shutdown-timeout', 'later'], '--shutdown-timeout: "later" is not a duration'],
    [['serve', '--watch-buffer', '4MB'], '--watch-buffer: "4MB" is not a size'],
    [['serve', '--watch-buffer', '10'], '--watch-buffer: "10" is not a size of at least 1Ki'],
    [['serve', '--watch-stall-timeout', 'never'], '--watch-stall-timeout: "never" is not a duration'],
    [['serve', '--max-requests-inflight', 'many'], '--max-requests-inflight: "many" is not a whole number (0: no limit)'],
    [['serve', '--max-mutating-requests-inflight', '1.5'], '--max-mutating-requests-inflight: "1.5" is not a whole number'],
    [['serve', '--request-timeout', 'soon'], '--request-timeout: "soon" is not a duration'],
    [['serve', '--request-timeout', '0'], '--request-timeout: must be more than 0'],
    [['serve', 'extra'], "'extra'"],
    [['frobnicate'], 'unknown command "frobnicate"'],
  ])('orchd %j exits 2 and says what is wrong', async (args, message) => {
    const cwd = await mkdtemp(join(root, 'bad-'));
    const child = spawnCli(cli, args, { cwd });
    expect(await child.exited).toEqual({ code: 2, signal: null });
    expect(child.output.stderr).toContain(message);
    // Where to read more: the command's own usage, or the list of commands for an unknown one.
    expect(child.output.stderr).toContain(args[0] === 'serve' ? "Run 'orchd serve --help' for usage." : "Run 'orchd --help' for usage.");
    expect(child.output.stdout).toBe('');
    // Refused before doing anything: no ./data made.
    expect(await exists(join(cwd, 'data'))).toBe(false);
  });

  it('node <cli> serve --port P --bind-address 127.0.0.1 --data-dir D serves there and keeps its data in D', async () => {
    const port = await freePort();
    const dataDir = join(root, 'explicit');
    const child = spawnCli(cli, ['serve', '--port', String(port), '--bind-address', '127.0.0.1', '--data-dir', dataDir]);
    const ready = await child.waitForLine(isReady);
    expect(ready.url).toBe(`http://127.0.0.1:${port}`);
    const agent = keepAlive(1);
    const version = await request(agent, ready.url as string, 'GET', '/version');
    expect(version.status).toBe(200);
    const created = await request(agent, ready.url as string, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cli' } });
    expect(created.status).toBe(201);
    agent.destroy();
    expect(await exists(join(dataDir, 'log', 'CURRENT'))).toBe(true);
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.lines.find((l) => l.msg === 'stopped')).toMatchObject({ seq: Number(created.body.metadata.resourceVersion) });
  });

  it('--max-mutating-requests-inflight and --request-timeout: a second write while one body is arriving gets 429; the slow body is cut at the timeout with 504', async () => {
    const child = spawnCli(cli, [
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(root, 'inflight-flags'),
      '--max-mutating-requests-inflight',
      '1',
      '--max-requests-inflight',
      '0',
      '--request-timeout',
      '2s',
    ]);
    const ready = await child.waitForLine(isReady);
    const { hostname, port } = new URL(String(ready.url));
    const slow = connect(Number(port), hostname);
    let answer = '';
    slow.on('data', (d) => (answer += d.toString()));
    const closed = new Promise<void>((resolve) => slow.once('close', () => resolve()));
    slow.write(`POST /api/v1/namespaces HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    const agent = keepAlive(1);
    let refused: Awaited<ReturnType<typeof request>> | undefined;
    // The slow one holds the only mutating slot once the server has its headers.
    for (let i = 0; i < 40 && refused?.status !== 429; i++) {
      refused = await request(agent, String(ready.url), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `n${i}` } });
      if (refused.status !== 429) await sleep(25);
    }
    expect(refused).toMatchObject({ status: 429, body: { kind: 'Status', reason: 'TooManyRequests', code: 429 } });
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 504 /);
    expect((await request(agent, String(ready.url), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after' } })).status).toBe(201);
    agent.destroy();
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('--watch-buffer and --watch-stall-timeout: a watcher that stops reading is ended by them with an ERROR', async () => {
    const child = spawnCli(cli, ['serve', '--port', '0', '--data-dir', join(root, 'watch-flags'), '--watch-buffer', '64Ki', '--watch-stall-timeout', '1s']);
    const ready = await child.waitForLine(isReady);
    const url = new URL('/api/v1/namespaces?watch=true', String(ready.url));
    // A raw reader that reads nothing until told to.
    const got: Buffer[] = [];
    const res = await new Promise<IncomingMessage>((resolve) => httpRequest(url, { agent: false }, resolve).end());
    res.pause();
    const agent = keepAlive(4);
    const padding = 'x'.repeat(60 * 1024);
    const watching = async () => {
      const m = await request(agent, String(ready.url), 'GET', '/metrics');
      return /apiserver_registered_watchers\{group="",kind="Namespace"\} 1/.test(String(m.body));
    };
    // Up to 12 MiB: past the kernel's socket buffers and the 64 KiB bound, so the watcher falls
    // behind, and is ended once it has not read for the stall timeout. Reading starts as soon as it is
    // ended: a peer that takes the rest of an ended stream too slowly is cut off (after 5 s), which a
    // slow machine reached while this was still writing.
    const n = 200;
    let i = 0;
    for (; i < n && (await watching()); i += 4) {
      const created = await Promise.all(
        [0, 1, 2, 3].map((j) =>
          request(agent, String(ready.url), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `w${i + j}`, annotations: { pad: padding } } }),
        ),
      );
      expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    }
    await eventually(async () => !(await watching()), { timeoutMs: 30_000, stepMs: 50, what: 'the slow watch closed' });
    expect(await watching()).toBe(false);
    res.on('data', (d: Buffer) => got.push(d));
    res.resume();
    await new Promise((r) => res.on('end', r));
    agent.destroy();
    const lines = Buffer.concat(got).toString('utf8').trim().split('\n');
    const last = JSON.parse(lines.at(-1)!);
    expect(last).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 500 } });
    expect(lines.length - 1).toBeLessThan(i);
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
  }, 180_000);

  it('a port already taken: exits 1 and says so', async () => {
    const taken = (await listen(0))!;
    try {
      const port = (taken.address() as { port: number }).port;
      const child = spawnCli(cli, ['serve', '--port', String(port), '--data-dir', join(root, 'taken')]);
      expect(await child.exited).toEqual({ code: 1, signal: null });
      expect(child.output.stderr).toContain('EADDRINUSE');
    } finally {
      await closeServer(taken);
    }
  });

  describe('a data folder orchd cannot use: one line saying which folder and what is wrong, exit 1', () => {
    /** The non-empty lines of stderr: exactly one is wanted. */
    const errorLines = (child: Child) => child.output.stderr.split('\n').filter((l) => l.trim() !== '');

    it('a folder that cannot be made (/proc/nope)', async () => {
      const child = spawnCli(cli, ['serve', '--port', '0', '--data-dir', '/proc/nope'], { lifeMs: 30_000 });
      expect(await child.exited).toEqual({ code: 1, signal: null });
      const lines = errorLines(child);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^orchd: data folder \/proc\/nope: cannot create it: /);
    });

    it('a path that is a file', async () => {
      const file = join(root, 'a-file');
      await copyFile(join(ROOT, 'package.json'), file);
      const child = spawnCli(cli, ['serve', '--port', '0', '--data-dir', file], { lifeMs: 30_000 });
      expect(await child.exited).toEqual({ code: 1, signal: null });
      expect(errorLines(child)).toEqual([`orchd: data folder ${file}: it is a file, not a folder`]);
    });

    it('a folder another running orchd holds', async () => {
      const dataDir = join(root, 'held');
      const first = spawnCli(cli, ['serve', '--port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir]);
      await first.waitForLine(isReady);
      try {
        const second = spawnCli(cli, ['serve', '--port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir], { lifeMs: 30_000 });
        expect(await second.exited).toEqual({ code: 1, signal: null });
        expect(errorLines(second)).toEqual([`orchd: data folder ${dataDir}: another orchd holds it (its log is locked: ${join(dataDir, 'log', 'LOCK')}); stop that one or choose another --data-dir`]);
      } finally {
        first.signal('SIGTERM');
        expect(await first.exited).toEqual({ code: 0, signal: null });
      }
    });
  });

  it("package.json's bin runs as `npx orchd serve …`", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    // The bundled command (tools/bundle-package.ts); npx runs the file itself: it needs its #! line.
    expect(manifest.bin).toEqual({ orchd: 'dist/package/cli.js' });
    expect((await readFile(join(await builtPackage(), 'cli.js'), 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
    const dataDir = join(root, 'npx');
    // --ignore-scripts: npx's install of the package would run `prepare` (the full build) again; the
    // build under test is the one dist points to.
    const child = spawnProcess('npx', ['--offline', '--ignore-scripts', 'orchd', 'serve', '--port', '0', '--data-dir', dataDir], { cwd: pkg, env: npmEnv() });
    await checkAndStop(child);
    expect(await exists(join(dataDir, 'log', 'CURRENT'))).toBe(true);
  });

  // The README's `npm start`: a build, then `orchd serve` with its defaults (127.0.0.1:8080, ./data).
  // The port is 0, passed on (`npm start -- --port 0`), so that the test runs whatever else listens
  // on 8080; that 8080 is serve's default is its usage's line, asserted above.
  it('npm start builds from an empty dist/, then serves on 127.0.0.1 with its data in ./data', async () => {
    // npm start builds first (npm ci no longer does): a checkout of its own, sources linked, dist its own.
    const checkout = join(root, 'checkout');
    await mkdir(checkout);
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) await copyFile(join(ROOT, f), join(checkout, f));
    for (const d of ['src', 'bench', 'tools', 'node_modules']) await symlink(join(ROOT, d), join(checkout, d));
    // What an earlier build left, of a source since removed: the build starts from an empty dist/.
    await mkdir(join(checkout, 'dist', 'src'), { recursive: true });
    await writeFile(join(checkout, 'dist', 'src', 'removed.js'), '');
    // The build type-checks the whole project first: minutes on a loaded machine. npm is killed only
    // past the test's own bound (the default 60 s life cut a slow build short, and left its server).
    // Port 0: a port picked before a build of minutes was taken by another test meanwhile (EADDRINUSE).
    const child = spawnProcess('npm', ['start', '--', '--port', '0'], { cwd: checkout, env: npmEnv(), lifeMs: 230_000 });
    await checkAndStop(child, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/, 200_000);
    expect(await exists(join(checkout, 'dist', 'src', 'removed.js'))).toBe(false);
    expect(await exists(join(checkout, 'data', 'log', 'CURRENT'))).toBe(true);
  }, 240_000);
});
