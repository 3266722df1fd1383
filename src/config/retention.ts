/**
 * The history retention policy as `--history-retention` writes it: comma-separated limits.
 *
 *   24h            keep versions written in the last 24 hours (Go duration: 90m, 1h30m, 7d is not Go)
 *   100000         keep the newest 100000 log entries
 *   24h,100000     both limits: an entry goes once it is older than 24h OR beyond the newest 100000
 *   none           keep all history (never compact)
 *
 * The value has the shape of the store's RetentionPolicy (src/store/retention.ts), which applies it.
 */
import { parseDuration } from './duration.js';

export interface RetentionLimits {
  /** Versions applied longer ago than this are dropped (ms). */
  maxAgeMs?: number;
  /** At most this many newest log entries are kept. */
  maxEntries?: number;
}

export const DEFAULT_RETENTION = '24h';

export function parseRetention(text: string): RetentionLimits {
  const t = text.trim();
  if (t === 'none') return {};
  if (t === '') throw new Error('history retention: empty; write e.g. 24h, 100000, 24h,100000 or none');
  const policy: RetentionLimits = {};
  for (const part of t.split(',').map((p) => p.trim())) {
    if (/^[0-9]+$/.test(part)) {
      if (policy.maxEntries !== undefined) throw new Error(`history retention: two entry counts in ${JSON.stringify(text)}`);
      policy.maxEntries = Number(part);
      continue;
    }
    let seconds: number;
    try {
      seconds = parseDuration(part);
    } catch {
      throw new Error(`history retention: ${JSON.stringify(part)} is neither a duration (24h, 90m) nor an entry count (100000)`);
    }
    if (policy.maxAgeMs !== undefined) throw new Error(`history retention: two durations in ${JSON.stringify(text)}`);
    policy.maxAgeMs = seconds * 1000;
  }
  return policy;
}
