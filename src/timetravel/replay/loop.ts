/**
 * The replay's loop: the recorded entries written into the served log one page at a time, each at
 * its recorded pace (pacing.ts), held by the controls (control.ts), and the next page
 * only once the watchers' connections have sent the last one.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiServer } from '../../http/server.js';
import type { LogEntry } from '../../log/log.js';
import { progress } from '../print/progress.js';
import type { ReplayControl } from './control.js';
import { Pacer, type Speed } from './pacing.js';
import type { ReplayLog } from './log.js';

export interface ReplayReport {
  entries: number;
  from: number;
  to: number;
  speed: Speed;
  /** From the first entry sent to the last one durable. */
  durationMs: number;
  entriesPerSecond: number;
  /** The span of the replayed entries' times: what speed 1 takes. */
  recordedSpanMs: number;
}

/** How often --watchers looks at the open watches, and the longest sleep between checks for close(). */
const POLL_MS = 20;

/**
 * Bytes a connection may hold unsent before the replay waits for it: a watch's high-water mark
 * (watch-stream.ts). A page of a recording is megabytes of events, more than a watcher may have
 * unsent before the server stops handing it live changes and sends it back to the log to catch up
 * (slower, and at the end of a replay it had not caught up when the server closed).
 */
const DRAIN_BELOW = 64 * 1024;
/** A peer that stops reading holds the replay up this long at most (the server then ends its watch as stalled). */
const DRAIN_MAX_MS = 60_000;

/** The server's open connections (each watcher's among them). */
export function openConnections(api: ApiServer): Set<Socket> {
  const open = new Set<Socket>();
  api.http.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return open;
}

/** Resolves once every connection has sent what it held beyond DRAIN_BELOW (or closed, or took too long). */
export async function connectionsDrained(connections: Set<Socket>, isClosed: () => boolean): Promise<void> {
  for (const s of connections) {
    if (isClosed()) return;
    if (s.destroyed || s.writableLength <= DRAIN_BELOW) continue;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        s.off('drain', done);
        s.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, DRAIN_MAX_MS);
      s.on('drain', done);
      s.on('close', done);
    });
  }
}

/** Sleeps ms in short steps, so close() is not held up by a long gap of the recording. */
async function pause(ms: number, isClosed: () => boolean): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0 && !isClosed(); left = until - performance.now()) await sleep(Math.min(left, POLL_MS * 5));
}

/** The recorded entries revealed in the served log: add() each, flush() the ones added as one committed batch. */
export function replayWriter(log: ReplayLog): { add(e: LogEntry): void; flush(): Promise<void> } {
  let batch: LogEntry[] = [];
  return {
    add(e) {
      batch.push(e);
    },
    async flush() {
      const entries = batch;
      batch = [];
      log.commit(entries);
    },
  };
}

export interface ReplayRun {
  pages: AsyncIterable<LogEntry[]>;
  control: ReplayControl;
  writer: ReturnType<typeof replayWriter>;
  /** Waits until the watchers' connections have sent what they were handed. */
  drained: () => Promise<void>;
  /** How many watches are open now. */
  watching: () => number;
  from: number;
  to: number;
  speed: Speed;
  watchers: number;
  isClosed: () => boolean;
  /** Said every noteMs while the replay waits for its watchers: what it waits for. */
  waiting?: { note: (open: number) => Promise<string>; say: (text: string) => void; everyMs: number };
}

/** Long: the pacing, the controls and the page-at-a-time flow are one loop over the entries, each step depending on the last. */
export async function replayEntries(r: ReplayRun): Promise<ReplayReport> {
  const stopped = () => new Error('the replay was closed before it finished');
  let said = performance.now();
  while (r.watching() < r.watchers) {
    if (r.isClosed()) throw stopped();
    await sleep(POLL_MS);
    if (r.waiting && performance.now() - said >= r.waiting.everyMs) {
      said = performance.now();
      r.waiting.say(await r.waiting.note(r.watching()));
    }
  }
  const pacer = new Pacer(r.speed);
  const started = performance.now();
  let entries = 0;
  const { writer } = r;
  // A pause or a jump moves the clock: entries are due relative to `started`, shifted by the time spent paused.
  let shift = 0;
  const bar = progress(r.to - r.from + 1, 'replay');
  try {
    pages: for await (const page of r.pages) {
      for (const e of page) {
        if (r.isClosed()) throw stopped();
        if (e.seq > r.to) break pages;
        // The value is decoded only when the entry carries no commit time (an old log's).
        const due = pacer.dueMs(e.time === undefined ? e.value : undefined, e.time);
        // Until the entry is due and not held: a pause during a gap holds it too.
        for (;;) {
          if (r.control.mustWait(e.seq)) {
            await writer.flush();
            const t = performance.now();
            await r.control.waitFor(e.seq, r.isClosed);
            shift += performance.now() - t;
          }
          if (r.isClosed()) throw stopped();
          // A jump or a step sends at once, and what follows keeps its recorded spacing from there.
          if (r.control.jumping(e.seq) || r.control.stepping()) shift = Math.max(shift, performance.now() - started - due);
          const wait = due - (performance.now() - started - shift);
          if (wait <= 0) break;
          await writer.flush();
          await pause(wait, () => r.isClosed() || r.control.mustWait(e.seq) || r.control.jumping(e.seq));
        }
        writer.add(e);
        r.control.sent(e.seq, e.time);
        entries++;
      }
      // One page in flight at a time bounds the memory of a fast replay; the next waits until the
      // watchers have sent this one, so none falls behind.
      await writer.flush();
      await r.drained();
      bar.update(entries);
    }
  } finally {
    bar.stop();
  }
  await writer.flush();
  await r.drained();
  const durationMs = performance.now() - started;
  return {
    entries,
    from: r.from,
    to: r.to,
    speed: r.speed,
    durationMs,
    entriesPerSecond: durationMs > 0 ? (entries * 1000) / durationMs : entries,
    recordedSpanMs: pacer.spanMs,
  };
}

export const formatReport = (r: ReplayReport): string =>
  `replayed ${r.entries} entries (seq ${r.from}..${r.to}) at speed ${r.speed === 'max' ? 'max' : `${r.speed}x`} in ${(r.durationMs / 1000).toFixed(3)} s: ` +
  `${Math.round(r.entriesPerSecond)} entries/s (recorded span ${(r.recordedSpanMs / 1000).toFixed(0)} s)`;
