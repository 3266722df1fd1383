/**
 * The history retention policy: how much of the log's past compaction keeps (src/config/retention.ts
 * reads it from `--history-retention`). The current state is never dropped: compaction keeps each
 * key's latest revision at the horizon.
 */

export interface RetentionPolicy {
  /** Versions applied longer ago than this are dropped (ms). */
  maxAgeMs?: number;
  /**
   * At most this many newest sequence numbers are kept. On LevelDB every seq is an entry; on etcd a
   * seq is a revision and other keys' revisions are holes, so this counts revisions, as etcd's own
   * revision-based compaction does, and keeps that many of orchd's entries or fewer.
   */
  maxEntries?: number;
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
