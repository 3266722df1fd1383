/**
 * The controls of a replay: pause, resume, step one entry, jump to a version. The replay asks before
 * each entry whether it must wait (mustWait, waitFor) and says when it sent one (sent); an entry at
 * or below a jump's version goes at once, without its recorded gap.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const POLL_MS = 50;

export interface ControlStatus {
  paused: boolean;
  /** The newest version sent. */
  at: number;
  jumpTo: number;
  pauseAt: number | null;
}

export class ReplayControl {
  private paused = false;
  private steps = 0;
  private jumpTo = 0;
  private wake: (() => void) | undefined;
  /** Set by a replay started with --fork (replay-fork.ts): makes the fork at the version sent and serves it. */
  fork: (() => Promise<unknown>) | undefined;

  constructor(
    private at: number,
    /** Pause before the first entry past this version. */
    private pauseAt?: number,
  ) {}

  status(): ControlStatus {
    return { paused: this.paused, at: this.at, jumpTo: this.jumpTo, pauseAt: this.pauseAt ?? null };
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pauseAt = undefined;
    this.poke();
  }

  /** While paused: let one more entry go. */
  step(): void {
    this.steps++;
    this.poke();
  }

  /** Sends every entry up to rv at once (paused or not); a pause holds again after it. */
  jump(rv: number): void {
    this.jumpTo = Math.max(this.jumpTo, rv);
    this.poke();
  }

  /** Paused, with a step asked for: the next entry goes at once. */
  stepping(): boolean {
    return this.paused && this.steps > 0;
  }

  jumping(seq: number): boolean {
    return seq <= this.jumpTo;
  }

  mustWait(seq: number): boolean {
    if (this.pauseAt !== undefined && seq > this.pauseAt) {
      this.pauseAt = undefined;
      this.paused = true;
    }
    return this.paused && this.steps === 0 && !this.jumping(seq);
  }

  async waitFor(seq: number, isClosed: () => boolean): Promise<void> {
    while (this.mustWait(seq) && !isClosed()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
    }
  }

  sent(seq: number): void {
    this.at = seq;
    if (this.paused && this.steps > 0 && !this.jumping(seq)) this.steps--;
  }

  private poke(): void {
    this.wake?.();
  }
}

/** The control endpoint on 127.0.0.1: POST /pause, /resume, /step, /jump?to=RV, /fork (with --fork); GET /status. */
export async function serveControl(control: ReplayControl, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    const answer = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body) + '\n');
    };
    if (req.method === 'GET' && url.pathname === '/status') return answer(200, control.status());
    if (req.method !== 'POST') return answer(405, { error: `${req.method} ${url.pathname}: use POST /pause, /resume, /step, /jump?to=RV or GET /status` });
    switch (url.pathname) {
      case '/pause':
        control.pause();
        break;
      case '/resume':
        control.resume();
        break;
      case '/step':
        control.step();
        break;
      case '/fork':
        if (!control.fork) return answer(409, { error: 'this replay was not started with --fork DIR' });
        control.fork().then(
          (forked) => answer(200, forked),
          (err: unknown) => answer(500, { error: err instanceof Error ? err.message : String(err) }),
        );
        return;
      case '/jump': {
        const to = url.searchParams.get('to') ?? '';
        if (!/^\d+$/.test(to)) return answer(400, { error: `/jump?to=RV: ${JSON.stringify(to)} is not a resourceVersion` });
        control.jump(Number(to));
        break;
      }
      default:
        return answer(404, { error: `no control ${url.pathname}` });
    }
    answer(200, control.status());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** On a terminal: space pauses or resumes, s steps, e jumps to the end, f forks (with --fork), q (or Ctrl-C) quits. */
export function terminalKeys(control: ReplayControl, quit: () => void, stdin: NodeJS.ReadStream = process.stdin): { close(): void } {
  if (!stdin.isTTY) return { close() {} };
  const onKey = (b: Buffer) => {
    const key = b.toString();
    if (key === ' ') (control.status().paused ? control.resume() : control.pause());
    else if (key === 's') control.step();
    else if (key === 'e') control.jump(Number.MAX_SAFE_INTEGER);
    else if (key === 'f') control.fork?.().catch(() => undefined);
    else if (key === 'q' || key === '\u0003') quit();
  };
  stdin.setRawMode(true);
  stdin.on('data', onKey);
  stdin.resume();
  return {
    close() {
      stdin.off('data', onKey);
      stdin.setRawMode(false);
      stdin.pause();
    },
  };
}
