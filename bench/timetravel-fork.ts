/**
 * The timetravel scenario's fork figures (issue 27): `orchd fork RECORDING --at HEAD` into a new
 * folder, then `orchd serve` on it until its `ready` line, against `orchd replay RECORDING --speed
 * max` of the same recording with no watcher, until its report: the fork must be ready to serve
 * sooner. The fork's peak resident memory (VmHWM, read from /proc while it runs) says whether it
 * held the recording in memory. Each is the built `orchd` run as a user runs it (node start-up
 * included).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Child } from './child.js';
import { freePort, Orchd } from './orchd.js';

export interface ForkFigures {
  /** `orchd fork` from spawn to exit (s). */
  forkSeconds: number;
  /** Its peak resident set (MiB). */
  forkPeakMiB: number;
  /** `orchd serve` on the fork from spawn to ready (s). */
  serveSeconds: number;
  /** `orchd replay --speed max` from spawn to its report (s). */
  replaySeconds: number;
}

/** The peak resident set of a running process so far (KiB), or 0 once it is gone. */
async function peakKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
}

/** Runs `node cli ...args` to its exit: seconds, and the peak resident set seen (polled every 50 ms). */
async function timedWithPeak(cli: string, args: string[], limitMs: number): Promise<{ seconds: number; peakKiB: number }> {
  const started = performance.now();
  const child = Child.start(args[0], process.execPath, [cli, ...args]);
  let peak = 0;
  while (child.alive) {
    if (performance.now() - started > limitMs) {
      await child.stop('SIGKILL');
      throw new Error(`orchd ${args[0]} did not finish in ${limitMs} ms`);
    }
    peak = Math.max(peak, await peakKiB(child.pid));
    await sleep(50);
  }
  const { code } = await child.stop();
  if (code !== 0) throw new Error(`orchd ${args[0]} exited ${code}: ${child.lines.slice(-3).join(' ')}`);
  return { seconds: (performance.now() - started) / 1000, peakKiB: peak };
}

export async function forkVersusReplay(cli: string, recording: string, work: string, limitMs: number): Promise<ForkFigures> {
  const dir = join(work, 'fork');
  try {
    const fork = await timedWithPeak(cli, ['fork', recording, '--at', 'HEAD', '--data-dir', dir], limitMs);
    const spawned = performance.now();
    const { orchd } = await Orchd.start({ cli, dataDir: dir, args: ['--history-retention', 'none'], readyTimeoutMs: limitMs });
    const serveSeconds = (performance.now() - spawned) / 1000;
    await orchd.stop();
    const started = performance.now();
    const replay = Child.start('replay', process.execPath, [cli, 'replay', recording, '--speed', 'max', '--port', String(await freePort())]);
    try {
      await replay.waitForLine((l) => l.startsWith('replayed '), limitMs);
    } finally {
      await replay.stop();
    }
    return { forkSeconds: fork.seconds, forkPeakMiB: fork.peakKiB / 1024, serveSeconds, replaySeconds: (performance.now() - started) / 1000 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One fork of a data folder: `orchd fork --source-data-dir` at a version, then `orchd serve` on it. */
export interface FolderForkFigures {
  at: number;
  /** `orchd fork` from spawn to exit (s). */
  forkSeconds: number;
  forkPeakMiB: number;
  /** `orchd serve` on the fork from spawn to ready (s), and what it started from. */
  serveSeconds: number;
  /** What its ready line says the start spent replaying the log (ms). */
  replayMs: number;
}

/**
 * Forks of the data folder dataDir at each version of `points` (issue 40: a fork shares the
 * source's tables and cuts its own tail, so it should cost about the same at every N), each then
 * served until ready; every fork is removed before the next.
 */
export async function forkFolderAt(cli: string, dataDir: string, points: readonly number[], work: string, limitMs: number): Promise<FolderForkFigures[]> {
  const out: FolderForkFigures[] = [];
  for (const at of points) {
    const dir = join(work, `folder-fork-${at}`);
    try {
      const fork = await timedWithPeak(cli, ['fork', '--source-data-dir', dataDir, '--at', String(at), '--data-dir', dir], limitMs);
      const spawned = performance.now();
      const { orchd, ready } = await Orchd.start({ cli, dataDir: dir, args: ['--history-retention', 'none'], readyTimeoutMs: limitMs });
      const serveSeconds = (performance.now() - spawned) / 1000;
      await orchd.stop();
      out.push({ at, forkSeconds: fork.seconds, forkPeakMiB: fork.peakKiB / 1024, serveSeconds, replayMs: ready.replayMs });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return out;
}
