import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packJson } from '../../src/log/codec.js';
import { LevelDbLog, type ImportedEntry } from '../../src/log/leveldb-log.js';
import { tempDir } from '../helpers/temp.js';

/*
 * LevelDbLog.import: a state read elsewhere written into a new log folder at its own versions below
 * a horizon, so the log opened on it answers as a compacted one whose kept entries are that state,
 * and goes on from the horizon. The tools build a replay's served log this way.
 */

const folder = async () => {
  const d = tempDir('orchd-import-', { until: 'file' });
  return join(d, 'log');
};

const put = (seq: number, name: string, time?: number): ImportedEntry => ({
  seq,
  type: 'put',
  key: `/namespaces//${name}`,
  raw: packJson({ metadata: { name, resourceVersion: String(seq) } }),
  ...(time ? { time } : {}),
});

describe('LevelDbLog.import', () => {
  it('writes the entries at their seqs and the horizon: the log reads them as kept entries and appends from the horizon', async () => {
    const path = await folder();
    await LevelDbLog.import(path, [[put(3, 'a', 1_700_000_000_000), put(7, 'b')], [put(9, 'c')]], 12);
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      expect([log.firstSeq, log.lastSeq]).toEqual([12, 11]);
      const kept: string[] = [];
      for await (const page of log.read(0, 11, { kept: true })) for (const e of page) kept.push(`${e.seq} ${e.type} ${e.key} ${(e.value as { metadata: { name: string } }).metadata.name}`);
      expect(kept).toEqual(['3 put /namespaces//a a', '7 put /namespaces//b b', '9 put /namespaces//c c']);
      expect((await log.get(3))?.time).toBe(1_700_000_000_000);
      expect(await log.get(5)).toBeUndefined();
      const next = log.append({ type: 'put', key: '/namespaces//d', value: { metadata: { name: 'd' } } });
      expect(next.seq).toBe(12);
      await next.durable;
    } finally {
      await log.close();
    }
  });

  it("with a history: its entries from the horizon on, at their seqs with their times, are the log's own, and the next append follows them", async () => {
    const path = await folder();
    const history = async function* () {
      yield [put(4, 'b', 1_700_000_000_004), put(5, 'a', 1_700_000_000_005)];
      yield [{ ...put(6, 'b', 1_700_000_000_006), type: 'delete' as const }];
    };
    expect(await LevelDbLog.import(path, [[put(2, 'a')]], 4, history())).toBe(6);
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      expect([log.firstSeq, log.lastSeq]).toEqual([4, 6]);
      const all: string[] = [];
      for await (const page of log.read(0, 6, { kept: true })) for (const e of page) all.push(`${e.seq} ${e.type} ${e.key} ${e.time ?? ''}`);
      expect(all).toEqual(['2 put /namespaces//a 0', '4 put /namespaces//b 1700000000004', '5 put /namespaces//a 1700000000005', '6 delete /namespaces//b 1700000000006']);
      const next = log.append({ type: 'put', key: '/namespaces//c', value: { metadata: { name: 'c' } } });
      expect(next.seq).toBe(7);
      await next.durable;
      // A commit time never goes back along the log: the next batch's is at least the last imported one's.
      expect((await log.get(7))!.time).toBeGreaterThanOrEqual(1_700_000_000_006);
    } finally {
      await log.close();
    }
  });

  it('refuses a history with a gap or out of order: the page is not written, nor the horizon', async () => {
    for (const [seqs, message] of [
      [[3, 5], 'history entry 5 (/namespaces//x) is not the next after 3'],
      [[4], 'history entry 4 (/namespaces//x) is not the next after 2'],
    ] as const) {
      const path = await folder();
      const history = async function* () {
        yield seqs.map((seq) => put(seq, 'x'));
      };
      await expect(LevelDbLog.import(path, [], 3, history())).rejects.toThrow(message);
      const log = new LevelDbLog({ path });
      await log.open();
      try {
        expect([log.firstSeq, log.lastSeq]).toEqual([1, 0]);
      } finally {
        await log.close();
      }
    }
  });

  it('refuses a folder whose log holds entries, and an entry at or past the horizon, writing nothing', async () => {
    const path = await folder();
    await expect(LevelDbLog.import(path, [[put(4, 'a')]], 4)).rejects.toThrow('entry 4 (/namespaces//a) is not below the horizon 4');
    await LevelDbLog.import(path, [[put(1, 'a')]], 2);
    await expect(LevelDbLog.import(path, [[put(1, 'b')]], 3)).rejects.toThrow('the log already holds entries (entry 1)');
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      expect([log.firstSeq, log.lastSeq]).toEqual([2, 1]);
      expect(((await log.get(1))?.value as { metadata: { name: string } }).metadata.name).toBe('a');
    } finally {
      await log.close();
    }
  });
});
