/**
 * Child processes the harness starts (orchd, the bare HTTP peer, etcd): started with their output
 * captured, and always stopped by their own PID — on success, on error and when the harness exits.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const running = new Set<Child>();

/** Last resort: a harness that dies (error, Ctrl-C) must not leave servers behind. */
function killAllSync(): void {
  for (const c of running) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    // Only where nobody else (a test runner) owns the signal.
    if (process.listenerCount(sig) > 0) continue;
    process.once(sig, () => {
      killAllSync();
      process.exit(130);
    });
  }
}

/** How many children the harness has started that have not exited yet. */
export const runningChildren = (): number => running.size;

export class Child {
  readonly pid: number;
  /** Lines the child wrote, stdout and stderr interleaved (the last 2,000). */
  readonly lines: string[] = [];
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];

  private constructor(
    readonly name: string,
    proc: ChildProcess,
  ) {
    if (proc.pid === undefined) throw new Error(`${name}: could not start`);
    this.pid = proc.pid;
    running.add(this);
    // 'close', not 'exit': 'exit' can come while the child's last output (a large result line) is
    // still in the pipe, and a waiter would fail on a line that was written.
    this.exited = new Promise((resolve) => {
      proc.once('close', (code, signal) => {
        this.exitInfo = { code, signal };
        running.delete(this);
        resolve({ code, signal });
      });
    });
    for (const stream of [proc.stdout, proc.stderr]) {
      let rest = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) this.onLine(line);
      });
    }
  }

  static start(name: string, command: string, args: string[], options: SpawnOptions = {}): Child {
    hookExit();
    const proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    return new Child(name, proc);
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  private onLine(line: string): void {
    this.lines.push(line);
    if (this.lines.length > 2000) this.lines.splice(0, this.lines.length - 2000);
    this.waiters = this.waiters.filter((w) => {
      if (!w.test(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  /** The first line (already written or to come) that passes test; fails on exit or timeout. */
  waitForLine(test: (line: string) => boolean, timeoutMs: number): Promise<string> {
    const seen = this.lines.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => fail(`no expected output after ${timeoutMs} ms`), timeoutMs);
      const fail = (why: string) => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`${this.name} (pid ${this.pid}): ${why}; last output:\n${this.lines.slice(-15).join('\n')}`));
      };
      const waiter = {
        test,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      this.waiters.push(waiter);
      void this.exited.then(({ code, signal }) => {
        if (!this.waiters.includes(waiter)) return;
        clearTimeout(timer);
        fail(`exited (code ${code}, signal ${signal})`);
      });
    });
  }

  /** Signal by PID, then SIGKILL if it has not exited after graceMs. Resolves once it is gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.alive) return this.exited;
    try {
      process.kill(this.pid, signal);
    } catch {
      return this.exited;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }, graceMs);
    const info = await this.exited;
    clearTimeout(timer);
    return info;
  }
}
