/**
 * replay: time until a restarted orchd answers /readyz 200, against the length of its log.
 * Cold: the log's N entries lie after the last checkpoint (a crash before any checkpoint: the whole
 * log is replayed). Warm: the same server restarted after a graceful stop, which saved a checkpoint.
 */
import { rm } from 'node:fs/promises';
import type { BenchContext, Scenario } from '../context.js';
import { waitFor200 } from '../http-client.js';
import { freePort, Orchd } from '../orchd.js';
import { cpuSeconds, memory } from '../proc.js';
import { col, type Plot, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents } from '../seed.js';

const TARGET_ENTRIES = 1_000_000;
/** Issue 19: ready from the log alone, and from a checkpoint. */
const TARGET_SECONDS = 5;
const TARGET_CHECKPOINT_SECONDS = 2;

interface Restart {
  /** Spawn → first /readyz 200, ms. */
  toReadyMs: number;
  /** CPU time of the server (all its threads) from spawn to the first /readyz 200: less at the mercy of a busy machine than toReadyMs. */
  cpuToReadyMs: number;
  /** The server's own replayMs (from its `ready` line). */
  replayMs: number;
  seq: number;
  objects: number;
  peakRss: number;
  rss: number;
}

async function restart(ctx: BenchContext, dataDir: string): Promise<Restart> {
  const port = await freePort();
  const orchd = await Orchd.spawn({ cli: ctx.orchdCli, dataDir, port, cpuProfDir: ctx.opts.cpuProf });
  try {
    await waitFor200(`http://127.0.0.1:${port}/readyz`, 600_000, 5);
    const toReadyMs = performance.now() - orchd.spawnedAt;
    const cpuToReadyMs = (cpuSeconds(orchd.pid) ?? NaN) * 1000;
    const ready = await orchd.ready(30_000);
    const mem = memory(orchd.pid);
    return { toReadyMs, cpuToReadyMs, replayMs: ready.replayMs, seq: ready.seq, objects: ready.objects, peakRss: mem?.peakRss ?? NaN, rss: mem?.rss ?? NaN };
  } finally {
    await orchd.stop();
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const rows: Row[] = [];
  const measured = new Map<number, { cold: Restart; warm: Restart }>();
  for (const n of [...ctx.opts.replayEntries].sort((a, b) => a - b)) {
    const dataDir = await Orchd.newDataDir();
    try {
      ctx.log(`replay: writing ${n.toLocaleString('en-US')} log entries`);
      const t0 = performance.now();
      await seedEvents(ctx.orchdCli, dataDir, n, (done) => {
        if (done % 100_000 === 0) ctx.log(`replay: ${done.toLocaleString('en-US')} entries written`);
      });
      const seedMs = performance.now() - t0;
      ctx.log(`replay: restart with ${n.toLocaleString('en-US')} entries after the checkpoint`);
      const cold = await restart(ctx, dataDir);
      ctx.log('replay: restart after a graceful stop (checkpoint)');
      const warm = await restart(ctx, dataDir);
      measured.set(n, { cold, warm });
      rows.push({
        entries: n,
        objects: cold.objects,
        coldReady: cold.toReadyMs / 1000,
        coldReplay: cold.replayMs / 1000,
        coldCpu: cold.cpuToReadyMs / 1000,
        rate: (n * 1000) / Math.max(1, cold.replayMs),
        coldRss: cold.peakRss,
        warmReady: warm.toReadyMs / 1000,
        warmReplay: warm.replayMs / 1000,
        warmCpu: warm.cpuToReadyMs / 1000,
        warmRss: warm.peakRss,
        seed: seedMs / 1000,
      });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const columns = [
    col('entries', 'log entries', 'int'),
    col('objects', 'objects', 'int'),
    col('coldReady', 'to /readyz 200 (s)', 'seconds'),
    col('coldReplay', 'replay (s)', 'seconds'),
    col('coldCpu', 'CPU to ready (s)', 'seconds'),
    col('rate', 'entries/s', 'rate'),
    col('coldRss', 'peak RSS', 'bytes'),
    col('warmReady', 'with checkpoint: to ready (s)', 'seconds'),
    col('warmReplay', 'checkpoint load (s)', 'seconds'),
    col('warmCpu', 'CPU to ready (s)', 'seconds'),
    col('warmRss', 'peak RSS', 'bytes'),
    col('seed', 'writing the log (s)', 'seconds'),
  ];
  const notes = [
    "to /readyz 200: from spawning `node dist/src/cli.js serve` (Node start-up included) until /readyz first answers 200, polled every 5 ms; replay: the server's own figure from its `ready` log line; CPU to ready: the server's CPU time (all threads, /proc/<pid>/stat) at that first 200, which a busy machine inflates far less than the wall time.",
    'Cold: every entry lies after the last checkpoint, so the whole log is replayed (a crash before any checkpoint). With checkpoint: the same data folder restarted after a graceful SIGTERM, which saves one.',
    "The log holds creates of distinct ~1 KB Events (bench/seed.ts appends them through orchd's LevelDB log, cloning a record created through the API).",
  ];
  const points = (f: (r: { cold: Restart; warm: Restart }) => number): [number, number][] => [...measured].map(([n, r]) => [n, f(r) / 1000]);
  const plots: Plot[] = [
    {
      title: 'Time to ready vs log length',
      kind: 'line',
      xLabel: 'log entries',
      yLabel: 'seconds',
      logX: true,
      series: [
        { name: 'cold (full replay)', points: points((r) => r.cold.toReadyMs) },
        { name: 'with checkpoint', points: points((r) => r.warm.toReadyMs) },
      ],
    },
  ];
  const at = measured.get(TARGET_ENTRIES);
  const largest = Math.max(...measured.keys());
  const targets: TargetCheck[] = [
    {
      scenario: 'replay',
      name: 'ready after restart with 1M log entries (full replay)',
      target: `< ${TARGET_SECONDS} s`,
      measured: at
        ? `${(at.cold.toReadyMs / 1000).toFixed(2)} s`
        : `not at 1M (${(measured.get(largest)!.cold.toReadyMs / 1000).toFixed(2)} s at ${largest.toLocaleString('en-US')}; use --replay-entries 1000000)`,
      met: at ? at.cold.toReadyMs < TARGET_SECONDS * 1000 : null,
    },
    {
      scenario: 'replay',
      name: 'ready after restart with 1M log entries (from a checkpoint)',
      target: `< ${TARGET_CHECKPOINT_SECONDS} s`,
      measured: at ? `${(at.warm.toReadyMs / 1000).toFixed(2)} s` : 'not at 1M',
      met: at ? at.warm.toReadyMs < TARGET_CHECKPOINT_SECONDS * 1000 : null,
    },
  ];
  return { id: 'replay', title: replay.title, tables: [{ title: 'replay: restart time vs log length', columns, rows, notes }], plots, targets, elapsedMs: performance.now() - started };
}

export const replay: Scenario = { id: 'replay', title: 'Restart: time to ready vs log length', run };
