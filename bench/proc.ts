/**
 * What a process costs, read from procfs (Linux): CPU time of all its threads (LevelDB and libuv work
 * on threads of their own, so process.cpuUsage() of a child would not be enough), and resident memory.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds the process has used so far; undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  const ticks = cpuTicks(pid);
  return ticks === undefined ? undefined : ticks / clockTicks();
}

const cpuTicks = (pid: number) => statCpuTicks(`/proc/${pid}/stat`);
// The main thread alone (its JavaScript thread, for Node): the rest of the process's ticks are other
// threads' (libuv's pool, LevelDB's, V8's compiler and GC helpers).
const mainThreadCpuTicks = (pid: number) => statCpuTicks(`/proc/${pid}/task/${pid}/stat`);

function statCpuTicks(path: string): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  // comm (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
  return Number(fields[11]) + Number(fields[12]);
}

export interface Memory {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size over the process's life (VmHWM), bytes. */
  peakRss: number;
}

export function memory(pid: number): Memory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peakRss: kb('VmHWM') };
}

/**
 * Sets the process's peak RSS (VmHWM) back to its current RSS (Linux: `5` written to
 * /proc/<pid>/clear_refs, allowed to the process's owner), so the next peakRss is the peak of what
 * happens from now on, not of the startup replay. False when the kernel does not allow it.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves true once the process has used under 5 % of a core in each of two windows of windowMs in
 * a row (its background work after a start, a replay's garbage collection, is over), or false after
 * maxMs. Its own CPU time, so other processes on the machine do not count.
 */
export async function waitIdle(pid: number, maxMs = 10_000, windowMs = 250): Promise<boolean> {
  const deadline = performance.now() + maxMs;
  let quiet = 0;
  let before = cpuSeconds(pid);
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = cpuSeconds(pid);
    if (now === undefined || before === undefined) return false;
    quiet = now - before < (0.05 * windowMs) / 1000 ? quiet + 1 : 0;
    if (quiet >= 2) return true;
    before = now;
  }
  return false;
}

/** CPU use of one process (or of its main thread alone) over a window, as a percentage of one core. */
export class CpuWindow {
  // Whole clock ticks, divided only at the end: a main thread's window and its process's that hold the
  // same ticks give the same seconds (differences of divided readings may not, by an ulp).
  private readonly ticks0: number;
  private readonly t0 = performance.now();
  private readonly read: (pid: number) => number | undefined;

  constructor(
    private readonly pid: number,
    mainThread = false,
  ) {
    this.read = mainThread ? mainThreadCpuTicks : cpuTicks;
    this.ticks0 = this.read(pid) ?? NaN;
  }

  percent(): number {
    const cpu = this.seconds();
    const wall = this.wallSeconds();
    return wall > 0 ? (cpu / wall) * 100 : NaN;
  }

  /** CPU seconds used since the window opened. */
  seconds(): number {
    return ((this.read(this.pid) ?? NaN) - this.ticks0) / clockTicks();
  }

  wallSeconds(): number {
    return (performance.now() - this.t0) / 1000;
  }
}
