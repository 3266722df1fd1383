/** The few /metrics figures of orchd that explain a write result: how many records a synced batch held, and how long syncs took. */
import { HttpClient } from './http-client.js';

export interface LogCounters {
  batches: number;
  records: number;
  appendSeconds: number;
}

const value = (text: string, name: string): number => Number(new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text)?.[1] ?? NaN);

export async function logCounters(http: HttpClient): Promise<LogCounters> {
  const res = await http.request('GET', '/metrics');
  const text = res.body.toString('utf8');
  return {
    batches: value(text, 'orchd_log_batch_size_count'),
    records: value(text, 'orchd_log_batch_size_sum'),
    appendSeconds: value(text, 'orchd_log_append_duration_seconds_sum'),
  };
}

/** Mean records per batch and mean append-to-durable ms between two readings. */
export function batchStats(a: LogCounters, b: LogCounters): { meanBatch: number; meanSyncMs: number } {
  const batches = b.batches - a.batches;
  return { meanBatch: batches > 0 ? (b.records - a.records) / batches : NaN, meanSyncMs: batches > 0 ? ((b.appendSeconds - a.appendSeconds) * 1000) / batches : NaN };
}

/** Per stage of a write, seconds summed and times run, as orchd started with ORCHD_STAGE_TIMING=1 reports them. */
export type StageCounters = Map<string, { seconds: number; count: number }>;

export async function stageCounters(http: HttpClient): Promise<StageCounters> {
  const text = (await http.request('GET', '/metrics')).body.toString('utf8');
  const stages: StageCounters = new Map();
  const add = (stage: string, seconds: boolean, v: string) => {
    const s = stages.get(stage) ?? { seconds: 0, count: 0 };
    if (seconds) s.seconds = Number(v);
    else s.count = Number(v);
    stages.set(stage, s);
  };
  for (const m of text.matchAll(/^orchd_stage_(seconds_total|total)\{stage="([^"]+)"\} ([0-9.eE+-]+)$/gm)) add(m[2], m[1] === 'seconds_total', m[3]);
  // The whole create as the server timed it (routing, authorization and body reading included), as the stage "request".
  for (const m of text.matchAll(/^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.eE+-]+)$/gm)) {
    if (m[2].includes('verb="POST"') && m[2].includes('resource="events"')) add('request', m[1] === 'sum', m[3]);
  }
  return stages;
}

/** µs per operation spent in each stage between two readings, for `ops` operations. */
export function stageMicros(a: StageCounters, b: StageCounters, ops: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [stage, after] of b) out[stage] = ops > 0 ? ((after.seconds - (a.get(stage)?.seconds ?? 0)) * 1e6) / ops : NaN;
  return out;
}
