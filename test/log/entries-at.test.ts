import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesAt } from '../../src/log/entries-at.js';
import { encryptAtRest } from '../../src/log/encryption/index.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { SEEK_GAP } from '../../src/log/leveldb-ordered-read.js';
import type { Log, LogEntry } from '../../src/log/log.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { tempDir } from '../helpers/temp.js';

const ENTRIES = 5000;

/** A log of ENTRIES writes over 300 keys (puts and some deletes), in batches of 100, its first 400 compacted but a few. */
async function written(log: Log): Promise<void> {
  for (let b = 0; b < ENTRIES; b += 100) {
    const acks: Promise<number>[] = [];
    for (let i = b; i < b + 100; i++) {
      const key = `g/r/ns/k${i % 300}`;
      acks.push(log.append(i % 7 === 6 ? { type: 'delete', key, value: { i } } : { type: 'put', key, value: { i, pad: 'x'.repeat(i % 900) } }).durable);
    }
    await Promise.all(acks);
  }
  // Kept below the horizon: every third entry, as a compaction keeps some (each key's state at it).
  await log.compact(401, (seq) => seq % 3 === 0);
}

const line = (e: LogEntry | undefined) => (e === undefined ? 'none' : `${e.seq} ${e.type} ${e.key} ${JSON.stringify(e.value)}`);

async function joined(pages: AsyncIterable<(LogEntry | undefined)[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const page of pages) for (const e of page) out.push(line(e));
  return out;
}

/** Wanted seqs of every shape the pass meets: dense runs, gaps just under and over SEEK_GAP, long gaps, and seqs the log does not hold. */
function shapes(last: number): number[][] {
  const every = (from: number, to: number, step: number) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
  return [
    every(1, last, 1),
    every(3, last, SEEK_GAP),
    every(5, last, SEEK_GAP + 1),
    every(2, last, 997),
    [...every(450, 2600, 1), ...every(2601, 4100, 40), ...every(4101, 4990, 1)],
    [1, 2, 399, 400, 401, 402, last - 1, last, last + 1, last + 50],
    [last],
    [],
  ];
}

describe('entriesAt and entrySync: entries by seq in one ordered pass, or one at a time', () => {
  it('gives on LevelDB what a get of each seq gives, in order, one item per seq (none where the log holds none)', async () => {
    const log = new LevelDbLog({ path: join(tempDir('orchd-entries-at-'), 'log') });
    await log.open();
    try {
      await written(log);
      for (const seqs of shapes(log.lastSeq)) {
        const got = await joined(log.entriesAt(seqs));
        const want = await Promise.all(seqs.map(async (s) => line(await log.get(s))));
        expect(got, `${seqs.length} seqs from ${seqs[0]}`).toEqual(want);
        expect(await joined(entriesAt(log, Float64Array.from(seqs)))).toEqual(want);
        // One at a time on the calling thread (a checkpoint along the log's part, when first used).
        expect(seqs.map((s) => line(log.entrySync(s)))).toEqual(want);
      }
      // Below the horizon, only what the compaction kept is there.
      const below = await joined(log.entriesAt(Array.from({ length: 400 }, (_, i) => i + 1)));
      expect(below.filter((l) => l !== 'none').length).toBeGreaterThan(0);
      expect(below.filter((l) => l === 'none').length).toBeGreaterThan(0);
    } finally {
      await log.close();
    }
  });

  it('reads a log without an ordered pass (the memory log) through its gets, with the same answers', async () => {
    const memory = new MemoryLog();
    const level = new LevelDbLog({ path: join(tempDir('orchd-entries-at-'), 'log') });
    await memory.open();
    await level.open();
    try {
      await written(memory);
      await written(level);
      expect((memory as Log).entriesAt).toBeUndefined();
      for (const seqs of shapes(memory.lastSeq)) expect(await joined(entriesAt(memory, seqs))).toEqual(await joined(entriesAt(level, seqs)));
    } finally {
      await memory.close();
      await level.close();
    }
  });

  it("opens what encryption at rest sealed, through the inner log's ordered pass, as get() does", async () => {
    const log = encryptAtRest(new LevelDbLog({ path: join(tempDir('orchd-entries-at-'), 'log') }), {
      resources: [{ resources: [{ group: '*', resource: '*' }], providers: [{ type: 'aesgcm', keys: [{ name: 'k', secret: randomBytes(32) }] }] }],
    });
    await log.open();
    try {
      await written(log);
      expect(log.entriesAt).toBeDefined();
      for (const seqs of shapes(log.lastSeq)) {
        const want = await Promise.all(seqs.map(async (s) => line(await log.get(s))));
        expect(await joined(entriesAt(log, seqs))).toEqual(want);
        expect(seqs.map((s) => line(log.entrySync!(s)))).toEqual(want);
      }
    } finally {
      await log.close();
    }
  });

  it('reads no entry on the calling thread where a KMS plugin must open data keys first (asynchronous)', () => {
    const log = encryptAtRest(new LevelDbLog({ path: join(tempDir('orchd-entries-at-'), 'log') }), {
      resources: [{ resources: [{ group: '*', resource: '*' }], providers: [{ type: 'kms', apiVersion: 'v2', name: 'p', endpoint: 'unix:///nonexistent.sock', timeoutMs: 1000 }] }],
    });
    expect(log.entrySync).toBeUndefined();
  });
});
