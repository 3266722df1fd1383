/**
 * orchd as a child process of the harness, so its own CPU time and peak memory are measured and the
 * load generator's are not mixed in. Its port comes from the `ready` JSON log line on stderr.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { Child } from './child.js';

/** A port free right now on 127.0.0.1 (the kernel picks it; there is a small race until it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** dist/src/cli.js of the checkout this module belongs to (from dist/bench/ or from bench/ in tests). */
export function defaultOrchdCli(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'package.json'))) return builtCommand(join(dir, 'dist'));
    dir = resolve(dir, '..');
  }
  throw new Error('orchd checkout not found above ' + fileURLToPath(import.meta.url));
}

/**
 * The `orchd` command a user installs (package.json's bin: the bundle `npm run build` writes); tsc's
 * dist/src/cli.js when there is no bundle. A bundle older than tsc's output is refused: it would
 * measure other code than the checkout's.
 */
function builtCommand(dist: string): string {
  const [bundled, compiled] = [join(dist, 'package/cli.js'), join(dist, 'src/cli.js')];
  if (!existsSync(bundled)) return compiled;
  if (statSync(bundled).mtimeMs < statSync(compiled).mtimeMs) throw new Error(`${bundled} is older than ${compiled}: run npm run build`);
  return bundled;
}

export interface OrchdOptions {
  cli: string;
  /** Reuse a data folder (restart); a fresh temp folder otherwise. */
  dataDir?: string;
  /** Write a V8 CPU profile of the server into this folder (node --cpu-prof). */
  cpuProfDir?: string;
  readyTimeoutMs?: number;
  /** A fixed port (a restart that polls /readyz during replay must know it before `ready`); 0 by default. */
  port?: number;
  /** More `orchd serve` flags (configuration files). */
  args?: string[];
  /** Environment variables added to the harness's own (ORCHD_STAGE_TIMING=1). */
  env?: Record<string, string>;
}

export interface ReadyLine {
  url: string;
  seq: number;
  objects: number;
  replayMs: number;
  /** The checkpoint the server started from (0: none) and how many log entries it folded on top. */
  checkpointSeq: number;
  replayed: number;
}

export class Orchd {
  private constructor(
    readonly child: Child,
    readonly dataDir: string,
    private readonly ownsDataDir: boolean,
    /** performance.now() when the process was spawned. */
    readonly spawnedAt: number,
  ) {}

  get pid(): number {
    return this.child.pid;
  }

  static async newDataDir(): Promise<string> {
    return mkdtemp(join(tmpdir(), 'orchd-bench-'));
  }

  /** Spawns the server; resolve with it as soon as the process runs (see ready()). */
  static async spawn(opts: OrchdOptions): Promise<Orchd> {
    if (!existsSync(opts.cli)) throw new Error(`${opts.cli} is missing: run npm run build first`);
    const dataDir = opts.dataDir ?? (await Orchd.newDataDir());
    const prof = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
    // Events live 1 h by default; a long benchmark must not see its own objects expire mid-run. The
    // in-flight limits (200 writes by default) would answer part of a 256-client cell with 429: the
    // bench measures what the server does with the load, as before the limits existed.
    const args = [
      ...prof,
      opts.cli,
      'serve',
      ...['--port', String(opts.port ?? 0), '--bind-address', '127.0.0.1', '--data-dir', dataDir, '--event-ttl', '240h'],
      ...['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'],
      ...(opts.args ?? []),
    ];
    const spawnedAt = performance.now();
    const child = Child.start('orchd', process.execPath, args, opts.env ? { env: { ...process.env, ...opts.env } } : {});
    return new Orchd(child, dataDir, opts.dataDir === undefined, spawnedAt);
  }

  /** Starts the server and waits for its `ready` line. */
  static async start(opts: OrchdOptions): Promise<{ orchd: Orchd; ready: ReadyLine }> {
    const orchd = await Orchd.spawn(opts);
    try {
      return { orchd, ready: await orchd.ready(opts.readyTimeoutMs ?? 120_000) };
    } catch (err) {
      await orchd.stop();
      throw err;
    }
  }

  async ready(timeoutMs: number): Promise<ReadyLine> {
    const line = await this.child.waitForLine((l) => l.includes('"msg":"ready"'), timeoutMs);
    const parsed = JSON.parse(line) as ReadyLine;
    const { url, seq, objects, replayMs, checkpointSeq, replayed } = parsed;
    return { url, seq, objects, replayMs, checkpointSeq, replayed };
  }

  /** SIGTERM (graceful: orchd checkpoints and closes its log), SIGKILL after the grace time. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.child.stop(signal, 60_000);
  }

  /** Stops it and removes the data folder if the harness made it. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}
