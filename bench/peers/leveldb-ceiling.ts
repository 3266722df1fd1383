/**
 * The storage ceiling: raw LevelDB synced batch appends through `level`, keyed and shaped as orchd's
 * log keys and stores its entries (8-byte big-endian seq, msgpack record), with no HTTP, validation or
 * views. A batch of c entries is what group commit can make of c concurrent clients at best.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { encodeRecord, seqKey } from '../../src/log/codec.js';
import { LatencyLog } from '../stats.js';
import type { Bounds } from '../load.js';

export interface CeilingResult {
  batchSize: number;
  entriesPerSec: number;
  batchesPerSec: number;
  /** Latency of one synced batch write, ms. */
  latency: LatencyLog;
}

/** One synced batch after another, each of batchSize entries of `value` (a record as orchd stores it). */
export async function leveldbCeiling(batchSize: number, bounds: Bounds, value: unknown): Promise<CeilingResult> {
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-leveldb-'));
  const db = new Level<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  const bytes = encodeRecord({ type: 'put', key: 'events.orch.io/events/default/x', value });
  const latency = new LatencyLog();
  try {
    await db.open();
    let seq = 0;
    const t0 = performance.now();
    const measureFrom = t0 + bounds.warmupMs;
    const stopAt = measureFrom + bounds.durationMs;
    let entries = 0;
    let last = measureFrom;
    for (;;) {
      const start = performance.now();
      if (start >= stopAt || entries >= bounds.maxOps) break;
      const chain = db.batch();
      for (let i = 0; i < batchSize; i++) chain.put(seqKey(++seq), bytes);
      await chain.write({ sync: true });
      const done = performance.now();
      if (start >= measureFrom) {
        latency.add(done - measureFrom, done - start);
        entries += batchSize;
        last = done;
      }
    }
    const windowS = Math.max(1, last - measureFrom) / 1000;
    return { batchSize, entriesPerSec: entries / windowS, batchesPerSec: latency.length / windowS, latency };
  } finally {
    await db.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
