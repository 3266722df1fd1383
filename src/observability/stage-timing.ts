/**
 * Where a write's time goes, stage by stage (decode, checks, …): wall time summed per stage, which
 * metrics.ts publishes as `orchd_stage_seconds_total{stage=…}` and `orchd_stage_total{stage=…}` (the
 * writes benchmark divides them by its creates). Off unless the process starts with
 * ORCHD_STAGE_TIMING=1: then every call returns at once, so the hot path pays a predictable branch.
 * The sums are the process's (the code's time, whichever server ran it), as process_cpu_seconds is.
 *
 *   let t = stageStart();
 *   decode();
 *   t = stageLap('decode', t);   // decode's time added; t is now the start of the next stage
 *   check();
 *   stageLap('checks', t);
 *
 * A stage should cover synchronous code: a lap across an await also counts whatever other
 * requests ran meanwhile (the benchmark says so of the stages that wait: admission, append).
 */
export const STAGES = ['decode', 'checks', 'fieldManager', 'defaults', 'admission', 'validation', 'encode', 'append', 'respond'] as const;
export type Stage = (typeof STAGES)[number];

/** Whether this process times stages (ORCHD_STAGE_TIMING=1 at its start). */
export const stageTimingOn = process.env.ORCHD_STAGE_TIMING === '1';
const on = stageTimingOn;
const index = new Map<Stage, number>(STAGES.map((s, i) => [s, i]));
const ms = new Float64Array(STAGES.length);
const counts = new Float64Array(STAGES.length);

/** Now (ms) as a stage's start; 0 when timing is off. */
export function stageStart(): number {
  return on ? performance.now() : 0;
}

/** Adds the time since `since` to stage; returns now, the next stage's start. */
export function stageLap(stage: Stage, since: number): number {
  if (!on) return 0;
  const now = performance.now();
  const i = index.get(stage)!;
  ms[i] += now - since;
  counts[i]++;
  return now;
}

/** Wall time (ms) summed in a stage and the times it ran, since the process started. */
export function stageTotals(stage: Stage): { ms: number; count: number } {
  const i = index.get(stage)!;
  return { ms: ms[i], count: counts[i] };
}
