import { join } from 'node:path';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeRecord, INDEX_KEY, packJson, seqKey } from '../../src/log/codec.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { Log } from '../../src/log/log.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import { INDEX_RANGE } from '../../src/log/version-index.js';
import { rng } from '../helpers/rng.js';
import { tempDir } from '../helpers/temp.js';
import { expectIndexAnswersAsFold, rawFolder, type StoredVersion } from './index-check.js';

/*
 * The version index (src/log/version-index.ts) against the one truth it stands for: the entries the
 * log stores. Writes, deletes and compactions that keep each key's newest entry at the horizon (as the
 * store asks), then a fold of the stored entries and the index must answer alike.
 */

const KEYS = ['/pods/a/web', '/pods/a/web-1', '/pods/b/web', '/configmaps/a/x', 'apps/deployments/a/d', '/namespaces//a'];
const PREFIXES = ['', '/pods/', '/pods/a/', 'apps/deployments/', '/configmaps/b/'];

/** Appends n random puts and deletes over KEYS, a batch of up to 20 a turn. */
async function churn(log: Log, n: number, random: () => number): Promise<void> {
  for (let done = 0; done < n;) {
    const batch: Promise<number>[] = [];
    for (let i = 0; i < 1 + Math.floor(random() * 20) && done < n; i++, done++) {
      const key = KEYS[Math.floor(random() * KEYS.length)];
      batch.push(log.append({ type: random() < 0.2 ? 'delete' : 'put', key, value: { metadata: { name: key }, n: done } }).durable);
    }
    await Promise.all(batch);
  }
}

/** Compacts below `below`, keeping each key's newest entry there, as the store's compaction asks. */
async function compactKeepingNewest(log: Log, stored: readonly StoredVersion[], below: number): Promise<void> {
  const newest = new Map<string, number>();
  for (const e of stored) if (e.seq < below) newest.set(e.key, Math.max(newest.get(e.key) ?? 0, e.seq));
  const kept = new Set(newest.values());
  await log.compact(below, (seq) => kept.has(seq));
}

const memoryStored = (log: MemoryLog): StoredVersion[] => [...log.disk.entries].map(([seq, b]) => decodeEntry(seq, b)).map((e) => ({ seq: e.seq, key: e.key, type: e.type }));

/** Versions to ask the state at: the horizon's state, a few inside, the head. */
const probes = (log: Log): number[] => [log.firstSeq - 1, log.firstSeq, Math.floor((log.firstSeq + log.lastSeq) / 2), log.lastSeq].filter((s, i, a) => s >= 0 && a.indexOf(s) === i);

describe('the version index', () => {
  it('MemoryLog: answers as the fold of its stored entries, through writes, deletes, compactions and a restart', async () => {
    const random = rng(40);
    let log = new MemoryLog();
    await log.open();
    for (let round = 0; round < 4; round++) {
      await churn(log, 300, random);
      await expectIndexAnswersAsFold(log.index, memoryStored(log), probes(log), PREFIXES);
      await compactKeepingNewest(log, memoryStored(log), log.lastSeq - 50);
      await expectIndexAnswersAsFold(log.index, memoryStored(log), probes(log), PREFIXES);
      await log.close();
      log = new MemoryLog({ disk: log.disk });
      await log.open();
    }
    expect(log.firstSeq).toBeGreaterThan(1000);
    await log.close();
  });

  it('LevelDbLog: its rows are exactly its stored entries, and it answers as their fold, through compactions and restarts', async () => {
    const random = rng(41);
    const path = join(tempDir('orchd-index-', { until: 'test' }), 'log');
    for (let round = 0; round < 4; round++) {
      const log = new LevelDbLog({ path });
      await log.open();
      await churn(log, 300, random);
      if (round > 0) {
        await log.close();
        const { entries } = await rawFolder(path);
        const again = new LevelDbLog({ path });
        await again.open();
        await compactKeepingNewest(again, entries, again.lastSeq - 50);
        await again.close();
      } else await log.close();
      const { entries, rows } = await rawFolder(path);
      expect(rows.map((r) => `${r.key} ${r.version}`).sort()).toEqual(entries.map((e) => `${e.key} ${e.type === 'delete' ? -e.seq : e.seq}`).sort());
      const reopened = new LevelDbLog({ path });
      await reopened.open();
      try {
        await expectIndexAnswersAsFold(reopened.index!, entries, probes(reopened), PREFIXES);
      } finally {
        await reopened.close();
      }
    }
  });

  it('LevelDbLog: a folder written before the index has none until a writer opens it, which builds it', async () => {
    const path = join(tempDir('orchd-index-old-', { until: 'test' }), 'log');
    const log = new LevelDbLog({ path });
    await log.open();
    await churn(log, 500, rng(42));
    await log.close();
    // What an older orchd left: entries, no rows, no marker.
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.clear(INDEX_RANGE);
    await db.del(INDEX_KEY);
    await db.close();
    const { entries } = await rawFolder(path);

    const reader = new LevelDbLog({ path, buildIndex: false });
    await reader.open();
    expect(reader.index).toBeUndefined();
    await reader.close();
    expect((await rawFolder(path)).rows).toEqual([]);

    const writer = new LevelDbLog({ path });
    await writer.open();
    try {
      await expectIndexAnswersAsFold(writer.index!, entries, probes(writer), PREFIXES);
    } finally {
      await writer.close();
    }
  });

  it('LevelDbLog: entries an older orchd appended after the index was built (no rows) make the next open rebuild it', async () => {
    const path = join(tempDir('orchd-index-older-', { until: 'test' }), 'log');
    const log = new LevelDbLog({ path });
    await log.open();
    await churn(log, 200, rng(43));
    const last = log.lastSeq;
    await log.close();
    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.put(seqKey(last + 1), encodeRecord({ type: 'put', key: '/pods/a/from-an-older-orchd', value: { n: 1 } }));
    await db.close();
    const { entries } = await rawFolder(path);

    const reader = new LevelDbLog({ path, buildIndex: false });
    await reader.open();
    expect(reader.index).toBeUndefined();
    await reader.close();
    const writer = new LevelDbLog({ path });
    await writer.open();
    try {
      expect(await writer.index!.versionsOf('/pods/a/from-an-older-orchd')).toEqual([last + 1]);
      await expectIndexAnswersAsFold(writer.index!, entries, probes(writer), PREFIXES);
    } finally {
      await writer.close();
    }
  });

  it('LevelDbLog.import writes the rows of what it imports, kept state and history alike', async () => {
    const path = join(tempDir('orchd-index-import-', { until: 'test' }), 'log');
    const raw = (seq: number, key: string, type: 'put' | 'delete' = 'put') => ({ seq, key, type, raw: packJson({ metadata: { name: key } }) });
    await LevelDbLog.import(
      path,
      [[raw(3, '/pods/a/p'), raw(7, '/pods/a/q')]],
      10,
      (async function* () {
        yield [raw(10, '/pods/a/p'), raw(11, '/pods/a/q', 'delete'), raw(12, '/pods/b/r')];
      })(),
    );
    const { entries } = await rawFolder(path);
    const log = new LevelDbLog({ path, buildIndex: false });
    await log.open();
    try {
      expect(log.index).toBeDefined();
      await expectIndexAnswersAsFold(log.index!, entries, [9, 10, 11, 12], PREFIXES);
    } finally {
      await log.close();
    }
  });
});
