/**
 * The timetravel scenario's watch measurements: `orchd replay FILE --speed max` as a user runs it
 * (its own process) with N plain HTTP watches of every Event from its initial version, and, as the
 * peer a replay should match or beat, a live orchd serving the same log with N catch-up watches of
 * every Event from the same version. Each gives the events per second the slowest watcher saw, the
 * deliveries per second in all, and the server's CPU seconds over the run (its threads included),
 * which the machine's load does not stretch as it stretches wall time.
 */
import { request } from 'node:http';
import type { BenchContext } from './context.js';
import { Child } from './child.js';
import { freePort, Orchd } from './orchd.js';
import { cpuSeconds } from './proc.js';
import { benchScript } from './watch-fanout.js';

/** No run may take longer than this. */
const LIMIT_MS = 600_000;

export interface WatchRate {
  /** Events per second to each watcher (the slowest one's). */
  eachPerSecond: number;
  /** Events delivered per second to all watchers together. */
  deliveriesPerSecond: number;
  /** Events delivered to all watchers together. */
  deliveries: number;
  /** The server's CPU seconds from the watches' start to the last event. */
  cpuSeconds: number;
}

/** Opens n watches of every Event from version `after`; resolves with each one's ms until it saw `count` events. */
function watchers(url: string, n: number, after: number, count: number): { opened: Promise<void>; done: Promise<number[]> } {
  const opens: Promise<void>[] = [];
  const dones: Promise<number>[] = [];
  for (let i = 0; i < n; i++) {
    let opened!: () => void;
    opens.push(new Promise((r) => (opened = r)));
    dones.push(
      new Promise((resolve, reject) => {
        const started = performance.now();
        const req = request(`${url}/apis/events.orch.io/v1/events?watch=1&resourceVersion=${after}`, (res) => {
          opened();
          let seen = 0;
          res.on('data', (chunk: Buffer) => {
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) seen++;
            if (seen >= count) {
              resolve(performance.now() - started);
              req.destroy();
            }
          });
          // The server closes a watcher that falls too far behind (an ERROR event, then the end).
          res.on('end', () => reject(new Error(`a watch ended after ${seen} of ${count} events`)));
          res.on('error', () => undefined);
        });
        req.setTimeout(LIMIT_MS, () => req.destroy(new Error('watch timed out')));
        req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
        req.end();
      }),
    );
  }
  return { opened: Promise.all(opens).then(() => undefined), done: Promise.all(dones) };
}

/** n watchers of `count` events from `after` on the server at url, pid's CPU counted meanwhile. */
async function measured(ctx: BenchContext, what: string, url: string, pid: number, n: number, after: number, count: number): Promise<WatchRate> {
  const cpu0 = cpuSeconds(pid) ?? NaN;
  const w = watchers(url, n, after, count);
  await w.opened;
  const times = await w.done.catch((err: Error) => err);
  if (times instanceof Error) throw new Error(`${what} to ${n}: ${times.message}`);
  const slowest = Math.max(...times);
  ctx.log(`timetravel: ${what} to ${n} watcher(s): ${count} events each in ${(slowest / 1000).toFixed(1)} s`);
  return { eachPerSecond: (count * 1000) / slowest, deliveriesPerSecond: (n * count * 1000) / slowest, deliveries: n * count, cpuSeconds: (cpuSeconds(pid) ?? NaN) - cpu0 };
}

/** `orchd replay FILE --speed max --watchers n`, n watches of every Event from its initial version. */
export function replayRate(ctx: BenchContext, cli: string, file: string, n: number, events: number): Promise<WatchRate> {
  const prof = ctx.opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', ctx.opts.cpuProf] : [];
  // SIGINT: the replay ends as on a terminal (a CPU profile is written on the way out).
  return replayingRate(ctx, 'replay', (port) => [...prof, cli, 'replay', file, '--speed', 'max', '--port', String(port), '--watchers', String(n)], 'SIGINT', n, events);
}

/** The bare peer of the replay (bench/peers/replay-fanout.ts): the same recording read and its Events written to n watches, nothing of orchd's server. */
export function bareReplayRate(ctx: BenchContext, file: string, n: number, events: number): Promise<WatchRate> {
  return replayingRate(ctx, 'bare replay peer', (port) => [benchScript(ctx, 'peers/replay-fanout.js'), file, String(port), String(n)], 'SIGTERM', n, events);
}

/** A process that serves a recording's entries to n watchers once they are all there: from its `serving` line to the last event each watcher saw. */
async function replayingRate(ctx: BenchContext, what: string, args: (port: number) => string[], stop: NodeJS.Signals, n: number, events: number): Promise<WatchRate> {
  const port = await freePort();
  const child = Child.start(what, process.execPath, args(port));
  try {
    const serving = await child.waitForLine((l) => l.startsWith('serving '), LIMIT_MS);
    const initial = Number(/resourceVersion (\d+)/.exec(serving)?.[1]);
    const rate = await measured(ctx, what, `http://127.0.0.1:${port}`, child.pid, n, initial, events);
    await child.waitForLine((l) => l.startsWith('replayed '), LIMIT_MS);
    return rate;
  } finally {
    await child.stop(stop);
  }
}

/** The peer: a live orchd on the data folder, n catch-up watches of every Event from version `after`. */
export async function catchUpRate(ctx: BenchContext, cli: string, dataDir: string, serveArgs: string[], n: number, after: number, events: number): Promise<WatchRate> {
  const { orchd, ready } = await Orchd.start({ cli, dataDir, args: serveArgs, readyTimeoutMs: LIMIT_MS, ...(ctx.opts.cpuProf ? { cpuProfDir: ctx.opts.cpuProf } : {}) });
  try {
    return await measured(ctx, 'live catch-up', ready.url, orchd.child.pid, n, after, events);
  } finally {
    await orchd.stop();
  }
}
