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

const put = (seq: number, name: string, time?: number): ImportedEntry => ({ seq, type: 'put', key: `/namespaces//${name}`, raw: packJson({ metadata: { name, resourceVersion: String(seq) } }), ...(time ? { time } : {}) });

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
      expect((await log.get(5))).toBeUndefined();
      const next = log.append(() => ({ type: 'put', key: '/namespaces//d', value: { metadata: { name: 'd' } } }));
      expect(next.seq).toBe(12);
      await next.durable;
    } finally {
      await log.close();
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
