/**
 * Latency statistics for the harness. Percentiles are nearest-rank (the smallest sample with at least
 * p% of the samples at or below it), so every reported figure is a latency that was really measured.
 */

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of ascending-sorted samples; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  if (p <= 0) return sorted[0];
  if (p >= 100) return sorted[sorted.length - 1];
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values).sort();
}

export function summarize(values: ArrayLike<number>): Summary {
  const s = sortedCopy(values);
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += s[i];
  return {
    count: s.length,
    min: s.length ? s[0] : NaN,
    mean: s.length ? sum / s.length : NaN,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.length ? s[s.length - 1] : NaN,
  };
}

export interface HistogramBin {
  /** Upper bound of the bin (ms); the first bin starts at 0. */
  le: number;
  count: number;
}

/**
 * Log-spaced bins (a latency spread over four decades stays readable): `perDecade` bins per power
 * of ten from the smallest to the largest sample.
 */
export function logHistogram(values: ArrayLike<number>, perDecade = 8): HistogramBin[] {
  if (values.length === 0) return [];
  const s = sortedCopy(values);
  const lo = Math.max(s[0], 1e-3);
  const hi = Math.max(s[s.length - 1], lo * 1.0001);
  const start = Math.floor(Math.log10(lo) * perDecade);
  const end = Math.ceil(Math.log10(hi) * perDecade);
  const bins: HistogramBin[] = [];
  let i = 0;
  for (let k = start + 1; k <= end; k++) {
    const le = 10 ** (k / perDecade);
    let count = 0;
    while (i < s.length && (s[i] <= le || k === end)) {
      count++;
      i++;
    }
    bins.push({ le, count });
  }
  return bins;
}

export interface TimelinePoint {
  /** Seconds since the start of the measured window (end of the bucket). */
  t: number;
  p50: number;
  p99: number;
  max: number;
  /** Operations completed in the bucket, per second. */
  rate: number;
}

/**
 * Latency over time: samples (completion time in ms since the window start, latency) grouped into
 * buckets of bucketMs. At most maxPoints buckets: a long run gets wider buckets.
 */
export function timeline(at: ArrayLike<number>, latency: ArrayLike<number>, windowMs: number, maxPoints = 120): TimelinePoint[] {
  if (at.length === 0 || windowMs <= 0) return [];
  const bucketMs = Math.max(100, Math.ceil(windowMs / maxPoints / 100) * 100);
  const n = Math.ceil(windowMs / bucketMs);
  const buckets: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < at.length; i++) {
    const b = Math.min(n - 1, Math.max(0, Math.floor(at[i] / bucketMs)));
    buckets[b].push(latency[i]);
  }
  return buckets.map((b, k) => {
    const s = summarize(b);
    return { t: ((k + 1) * bucketMs) / 1000, p50: s.p50, p99: s.p99, max: s.max, rate: (b.length * 1000) / bucketMs };
  });
}

/** A growable record of (completion time, latency) pairs, both in ms. */
export class LatencyLog {
  private atBuf = new Float64Array(1024);
  private latBuf = new Float64Array(1024);
  length = 0;

  add(atMs: number, latencyMs: number): void {
    if (this.length === this.atBuf.length) {
      const grow = (b: Float64Array) => {
        const n = new Float64Array(b.length * 2);
        n.set(b);
        return n;
      };
      this.atBuf = grow(this.atBuf);
      this.latBuf = grow(this.latBuf);
    }
    this.atBuf[this.length] = atMs;
    this.latBuf[this.length] = latencyMs;
    this.length++;
  }

  get at(): Float64Array {
    return this.atBuf.subarray(0, this.length);
  }

  get latencies(): Float64Array {
    return this.latBuf.subarray(0, this.length);
  }
}
