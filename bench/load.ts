/**
 * Load shapes. Every run is bounded twice — by time and by operation count — and warms up first:
 * operations started during the warm-up are not recorded (connections open, JIT, caches fill).
 */
import { CpuWindow, memory } from './proc.js';
import { LatencyLog } from './stats.js';

export interface Bounds {
  warmupMs: number;
  durationMs: number;
  /** Hard cap on operations in the measured window (all clients together). */
  maxOps: number;
}

/** Processes whose CPU and memory a run reports, by label (e.g. orchd, etcd). */
export type Watched = Record<string, number>;

export interface RunResult {
  ops: number;
  errors: number;
  /** Measured window, ms (from the end of warm-up until the last measured operation completed). */
  windowMs: number;
  throughput: number;
  latency: LatencyLog;
  /** % of one core over the measured window, per watched process, and `client` for the harness. */
  cpu: Record<string, number>;
  /** The same for each watched process's main thread alone (its JavaScript thread, for Node). */
  mainThreadCpu: Record<string, number>;
  /** Peak RSS (bytes) of each watched process at the end of the run. */
  peakRss: Record<string, number>;
  firstError?: string;
}

/** One operation: resolves true when it succeeded, false (or throws) when it did not. */
export type Op = (client: number, i: number) => Promise<boolean>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function measure(watched: Watched): { finish: () => Pick<RunResult, 'cpu' | 'mainThreadCpu' | 'peakRss'> } {
  const windows = Object.entries(watched).map(([name, pid]) => [name, pid, new CpuWindow(pid), new CpuWindow(pid, true)] as const);
  const self = new CpuWindow(process.pid);
  return {
    finish: () => {
      const cpu: Record<string, number> = { client: self.percent() };
      const mainThreadCpu: Record<string, number> = {};
      const peakRss: Record<string, number> = {};
      for (const [name, pid, w, main] of windows) {
        // One wall for both, the main thread read first: its window lies inside the whole process's, so its share never exceeds the whole.
        const mainSeconds = main.seconds();
        const wall = w.wallSeconds();
        cpu[name] = (w.seconds() / wall) * 100;
        mainThreadCpu[name] = (mainSeconds / wall) * 100;
        peakRss[name] = memory(pid)?.peakRss ?? NaN;
      }
      return { cpu, mainThreadCpu, peakRss };
    },
  };
}

/** `clients` loops, each issuing its next operation when the previous one answered (closed loop). */
export async function closedLoop(clients: number, bounds: Bounds, op: Op, watched: Watched = {}): Promise<RunResult> {
  const latency = new LatencyLog();
  const t0 = performance.now();
  const measureFrom = t0 + bounds.warmupMs;
  const stopAt = measureFrom + bounds.durationMs;
  let started = 0;
  let errors = 0;
  let firstError: string | undefined;
  let probe: ReturnType<typeof measure> | undefined;
  let lastDone = measureFrom;
  const warmupCap = Math.max(bounds.maxOps, 1000);
  let warmupOps = 0;

  const worker = async (client: number) => {
    let i = 0;
    for (;;) {
      const now = performance.now();
      if (now >= stopAt) return;
      const measured = now >= measureFrom;
      if (measured) {
        if (started >= bounds.maxOps) return;
        started++;
      } else if (++warmupOps > warmupCap) {
        // A cheap op must not spin through the warm-up unbounded: wait for the window instead.
        await sleep(measureFrom - now);
        continue;
      }
      if (measured && !probe) probe = measure(watched);
      let ok = false;
      try {
        ok = await op(client, i++);
      } catch (err) {
        firstError ??= err instanceof Error ? err.message : String(err);
      }
      const done = performance.now();
      if (!measured) continue;
      if (ok) latency.add(done - measureFrom, done - now);
      else errors++;
      if (done > lastDone) lastDone = done;
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => worker(c)));
  probe ??= measure(watched);
  const windowMs = Math.max(1, lastDone - measureFrom);
  return { ops: latency.length, errors, windowMs, throughput: (latency.length * 1000) / windowMs, latency, ...probe.finish(), firstError };
}

/**
 * A fixed rate of operations (open loop: a slow answer does not slow the schedule), at most
 * `inFlight` outstanding; an operation that would exceed it is counted as skipped.
 */
export async function fixedRate(ratePerSec: number, inFlight: number, bounds: Bounds, op: Op, watched: Watched = {}): Promise<RunResult & { skipped: number }> {
  const latency = new LatencyLog();
  const t0 = performance.now();
  const measureFrom = t0 + bounds.warmupMs;
  const stopAt = measureFrom + bounds.durationMs;
  const interval = 1000 / ratePerSec;
  let outstanding = 0;
  let errors = 0;
  let skipped = 0;
  let firstError: string | undefined;
  let probe: ReturnType<typeof measure> | undefined;
  let i = 0;
  let measuredOps = 0;
  const pending = new Set<Promise<void>>();
  for (let next = t0; next < stopAt && measuredOps < bounds.maxOps; next += interval) {
    const wait = next - performance.now();
    if (wait > 1) await sleep(wait);
    const start = performance.now();
    const measured = start >= measureFrom;
    if (measured) {
      probe ??= measure(watched);
      measuredOps++;
    }
    if (outstanding >= inFlight) {
      if (measured) skipped++;
      continue;
    }
    outstanding++;
    const p = op(0, i++)
      .catch((err: unknown) => {
        firstError ??= err instanceof Error ? err.message : String(err);
        return false;
      })
      .then((ok) => {
        outstanding--;
        const done = performance.now();
        if (!measured) return;
        if (ok) latency.add(done - measureFrom, done - start);
        else errors++;
      });
    pending.add(p);
    void p.then(() => pending.delete(p));
  }
  await Promise.all(pending);
  probe ??= measure(watched);
  const windowMs = Math.max(1, performance.now() - measureFrom);
  return { ops: latency.length, errors, skipped, windowMs, throughput: (latency.length * 1000) / windowMs, latency, ...probe.finish(), firstError };
}
