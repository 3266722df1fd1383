/**
 * The controls of a replay: pause, resume, step one entry, jump to a version. The replay asks before
 * each entry whether it must wait (mustWait, waitFor) and says when it sent one (sent); an entry at
 * or below a jump's version goes at once, without its recorded gap.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TimeTravelError } from '../core/errors.js';
import type { Speed } from './pacing.js';

const POLL_MS = 50;

export interface ControlStatus {
  paused: boolean;
  /** The newest version sent. */
  at: number;
  /** The last version the replay sends. */
  end: number;
  jumpTo: number;
  pauseAt: number | null;
  speed: Speed;
  /** When the entry at `at` was committed in the recording (RFC 3339), where it says. */
  recordedTime: string | null;
}

/** A control asked for what it cannot do: answered 400 with why. */
export class ControlError extends Error {}

export class ReplayControl {
  private paused = false;
  private steps = 0;
  private jumpTo = 0;
  private wake: (() => void) | undefined;
  /** Set by a replay started with --fork (../fork/fork.ts): makes the fork at the version sent and serves it. */
  fork: (() => Promise<unknown>) | undefined;
  private recordedTime: number | undefined;
  /** Those waiting for a step: asked for, and sent (answered once it is durable, when the replay waits again). */
  private asked: (() => void)[] = [];
  private stepped: (() => void)[] = [];

  constructor(
    private at: number,
    private readonly end: number,
    private readonly speed: Speed,
    /** Pause before the first entry past this version. */
    private pauseAt?: number,
  ) {}

  status(): ControlStatus {
    return {
      paused: this.paused,
      at: this.at,
      end: this.end,
      jumpTo: this.jumpTo,
      pauseAt: this.pauseAt ?? null,
      speed: this.speed,
      recordedTime: this.recordedTime === undefined ? null : new Date(this.recordedTime).toISOString(),
    };
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pauseAt = undefined;
    this.poke();
  }

  /** While paused: lets one more entry go; settles once it is sent (or the replay ended). */
  step(): Promise<void> {
    if (!this.paused) throw new ControlError('not paused: a step goes one entry at a time from a pause');
    if (this.at >= this.end) throw new ControlError(`at the end: version ${this.end} was the last one replayed`);
    this.steps++;
    this.poke();
    return new Promise((resolve) => this.asked.push(resolve));
  }

  /** Sends every entry up to rv at once (paused or not); a pause holds again after it. */
  jump(rv: number): void {
    if (rv <= this.at) throw new ControlError(`/jump?to=${rv}: the replay is at ${this.at}: it goes forward only`);
    if (rv > this.end) throw new ControlError(`/jump?to=${rv}: past the end: the replay ends at ${this.end}`);
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

  /** Holds the entry seq while it must wait; the replay has made what it sent durable before it asks. */
  async waitFor(seq: number, isClosed: () => boolean): Promise<void> {
    for (const done of this.stepped.splice(0)) done();
    while (this.mustWait(seq) && !isClosed()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
    }
  }

  /** The entry seq (committed at time in the recording) was sent. */
  sent(seq: number, time?: number): void {
    this.at = seq;
    if (time !== undefined) this.recordedTime = time;
    if (this.paused && this.steps > 0 && !this.jumping(seq)) {
      this.steps--;
      const step = this.asked.shift();
      if (step) this.stepped.push(step);
    }
  }

  /** The replay is over: nothing waits for a step any more. */
  ended(): void {
    for (const done of [...this.stepped.splice(0), ...this.asked.splice(0)]) done();
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
    if (req.method !== 'POST') return answer(405, { error: `${req.method} ${url.pathname}: use POST /pause, /resume, /step, /jump?to=RV, /fork or GET /status` });
    try {
      switch (url.pathname) {
        case '/pause':
          control.pause();
          break;
        case '/resume':
          control.resume();
          break;
        case '/step':
          // Answered with the position after the step: once the entry is sent.
          return void control.step().then(() => answer(200, control.status()));
        case '/fork':
          if (!control.fork) return answer(409, { error: 'this replay was not started with --fork DIR' });
          return void control.fork().then(
            (forked) => answer(200, forked),
            (err: unknown) => answer(500, { error: err instanceof Error ? err.message : String(err) }),
          );
        case '/jump': {
          const to = url.searchParams.get('to') ?? '';
          if (!/^\d+$/.test(to)) return answer(400, { error: `/jump?to=RV: ${JSON.stringify(to)} is not a resourceVersion` });
          control.jump(Number(to));
          break;
        }
        default:
          return answer(404, { error: `no control ${url.pathname}` });
      }
    } catch (err) {
      if (err instanceof ControlError) return answer(400, { error: err.message });
      throw err;
    }
    answer(200, control.status());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new TimeTravelError(`--control-port ${port}: ${err.code === 'EADDRINUSE' ? `127.0.0.1:${port} is in use` : `cannot listen (${err.code ?? err.message})`}`)),
    );
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
    if (key === ' ') {
      if (control.status().paused) control.resume();
      else control.pause();
    } else if (key === 's') void ignoreRefusal(() => control.step());
    else if (key === 'e') void ignoreRefusal(() => control.jump(control.status().end));
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

/** A key pressed when its control cannot do anything (a step while running, a jump at the end) does nothing. */
async function ignoreRefusal(act: () => unknown): Promise<void> {
  try {
    await act();
  } catch (err) {
    if (!(err instanceof ControlError)) throw err;
  }
}
