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
