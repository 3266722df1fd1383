/** Turning load runs into table cells and plot series, the same way in every scenario. */
import type { RunResult } from './load.js';
import { col, type Column, type Plot, type Series } from './result.js';
import { logHistogram, summarize, timeline, type LatencyLog } from './stats.js';

export interface CellStats {
  rate: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

export function cellStats(r: Pick<RunResult, 'throughput' | 'latency' | 'errors'>): CellStats {
  const s = summarize(r.latency.latencies);
  return { rate: r.throughput, p50: s.p50, p99: s.p99, max: s.max, errors: r.errors };
}

/** orchd's cell in a row: rate, latencies, errors, and the CPU of orchd and of the load generator. */
export function orchdFields(r: Pick<RunResult, 'throughput' | 'latency' | 'errors' | 'cpu'>): Record<string, number> {
  return { ...prefixed('orchd', cellStats(r)), orchdCpu: r.cpu.orchd, clientCpu: r.cpu.client };
}

/** The columns of orchdFields, the rate titled for the scenario ("creates/s", "lists/s", …). */
export const orchdColumns = (rateTitle: string): Column[] => [
  col('orchdRate', rateTitle, 'rate'),
  col('orchdP50', 'p50 ms', 'ms'),
  col('orchdP99', 'p99 ms', 'ms'),
  col('orchdMax', 'max ms', 'ms'),
  col('orchdErrors', 'errors', 'int'),
  col('orchdCpu', 'orchd CPU', 'pct'),
  col('clientCpu', 'client CPU', 'pct'),
];

/** Row fields `${prefix}Rate`, `${prefix}P50`, … for one system's cell. */
export function prefixed(prefix: string, s: CellStats): Record<string, number> {
  return { [`${prefix}Rate`]: s.rate, [`${prefix}P50`]: s.p50, [`${prefix}P99`]: s.p99, [`${prefix}Max`]: s.max, [`${prefix}Errors`]: s.errors };
}

export function histogramSeries(name: string, latency: LatencyLog): Series {
  return { name, points: logHistogram(latency.latencies).map((b) => [b.le, b.count] as [number, number]) };
}

export function timelineSeries(name: string, latency: LatencyLog, windowMs: number, field: 'p50' | 'p99' | 'max' | 'rate' = 'p99'): Series {
  return { name, points: timeline(latency.at, latency.latencies, windowMs).map((p) => [p.t, p[field]] as [number, number]) };
}

export const histogramPlot = (title: string, series: Series[]): Plot => ({
  title,
  kind: 'line',
  xLabel: 'latency (ms, upper bound of bin)',
  yLabel: 'requests',
  logX: true,
  series,
});

export const timelinePlot = (title: string, series: Series[], yLabel = 'p99 latency (ms)'): Plot => ({
  title,
  kind: 'line',
  xLabel: 'seconds into the measured window',
  yLabel,
  series,
});

/** Why a cell had errors, shown under its table. */
export function errorNote(label: string, r: Pick<RunResult, 'errors' | 'firstError'>): string[] {
  return r.errors > 0 ? [`${label}: ${r.errors} failed operations${r.firstError ? ` (first: ${r.firstError.slice(0, 200)})` : ''}`] : [];
}
