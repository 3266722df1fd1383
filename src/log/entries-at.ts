import type { Log, LogEntry } from './log.js';

/** How many entries are asked for at once from a log without an ordered read (LevelDB serves gets on its thread pool; etcd, ranges in flight). */
const GETS_AT_ONCE = 128;

/**
 * The entries at seqs (ascending, each once), in that order, in pages whose items joined are one
 * per seq: undefined where the log holds none (compacted, never written). keyOf(i), when given, is
 * the key that seqs[i] wrote (a log that finds entries by key, etcd, then reads it at once). One
 * ordered pass where the log has one (Log.entriesAt), else gets, a few at a time: what a loader of
 * many objects by revision calls (a checkpoint along the log, a state at a version).
 */
export async function* entriesAt(log: Log, seqs: ArrayLike<number>, keyOf?: (i: number) => string): AsyncIterable<(LogEntry | undefined)[]> {
  if (log.entriesAt) {
    yield* log.entriesAt(seqs);
    return;
  }
  for (let b = 0; b < seqs.length; b += GETS_AT_ONCE) {
    const reads: Promise<LogEntry | undefined>[] = [];
    for (let i = b; i < Math.min(seqs.length, b + GETS_AT_ONCE); i++) reads.push(log.get(seqs[i], keyOf?.(i)));
    yield await Promise.all(reads);
  }
}
