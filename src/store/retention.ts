/**
 * The history retention policy (`--history-retention`): how much of the log's past compaction
 * keeps. Written as comma-separated limits:
 *
 *   24h            keep versions written in the last 24 hours (Go duration: 90m, 1h30m, 7d is not Go)
 *   100000         keep the newest 100000 log entries
 *   24h,100000     both limits: an entry goes once it is older than 24h OR beyond the newest 100000
 *   none           keep all history (never compact)
 *
 * The current state is never dropped: compaction keeps each key's latest revision at the horizon.
 */
import { parseDuration } from '../config/duration.js';

export interface RetentionPolicy {
  /** Versions applied longer ago than this are dropped (ms). */
  maxAgeMs?: number;
  /** At most this many newest log entries are kept. */
  maxEntries?: number;
}

export const DEFAULT_RETENTION = '24h';

export function parseRetention(text: string): RetentionPolicy {
  const t = text.trim();
  if (t === 'none') return {};
  if (t === '') throw new Error('history retention: empty; write e.g. 24h, 100000, 24h,100000 or none');
  const policy: RetentionPolicy = {};
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

/**
 * The compaction horizon the policy asks for: entries below it may go. seqAt(t) says the newest
 * version applied at or before time t. 1 means nothing goes.
 */
export function horizonFor(policy: RetentionPolicy, lastSeq: number, now: number, seqAt: (t: number) => number | undefined): number {
  let h = 1;
  if (policy.maxEntries !== undefined) h = Math.max(h, lastSeq - policy.maxEntries + 1);
  if (policy.maxAgeMs !== undefined) {
    const old = seqAt(now - policy.maxAgeMs);
    if (old !== undefined) h = Math.max(h, old + 1);
  }
  return Math.min(h, lastSeq + 1);
}
