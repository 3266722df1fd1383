/** What every scenario is given: the options, how to start orchd, and the shared peers of the run. */
import type { BenchOptions } from './options.js';
import type { Bounds } from './load.js';
import { Orchd } from './orchd.js';
import { BareHttp } from './peers/bare-http.js';
import type { Etcd } from './peers/etcd.js';
import type { ScenarioResult } from './result.js';

export interface BenchContext {
  opts: BenchOptions;
  /** dist/src/cli.js to run orchd from. */
  orchdCli: string;
  /** The compiled bare node:http peer (bench/peers/bare-http-server.js), unless the default. */
  bareHttpScript?: string;
  /** The compiled local KMS v2 plugin (bench/peers/local-kms-plugin.js), unless the default. */
  kmsPluginScript?: string;
  /** etcd, when the run compares with it. */
  etcd?: Etcd;
  /** Progress for the operator (stderr), never part of the results. */
  log(msg: string): void;
}

export interface Scenario {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

export const bounds = (ctx: BenchContext, durationMs = ctx.opts.durationMs): Bounds => ({
  warmupMs: ctx.opts.warmupMs,
  durationMs,
  maxOps: ctx.opts.maxOps,
});

/** A fresh orchd (empty data folder unless given), optionally profiled, with more serve flags and environment; disposed by the caller. */
export async function startOrchd(ctx: BenchContext, dataDir?: string, args?: string[], env?: Record<string, string>) {
  return Orchd.start({ cli: ctx.orchdCli, dataDir, cpuProfDir: ctx.opts.cpuProf, ...(args ? { args } : {}), ...(env ? { env } : {}) });
}

/** The bare node:http peer for fn; given a folder, it also answers POST /durable with a LevelDB there. */
export async function withBareHttp<T>(ctx: BenchContext, dataDir: string | undefined, fn: (bare: BareHttp) => Promise<T>): Promise<T> {
  const bare = await BareHttp.start(ctx.bareHttpScript, dataDir);
  try {
    return await fn(bare);
  } finally {
    await bare.stop();
  }
}

export const ratio = (a: number | undefined, b: number | undefined): number | null => (a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null);
