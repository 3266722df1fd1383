import { spawnSync } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeRecord, encodeStoredRecord, packJson, readSeq, seqKey, StoredEntry } from '../../src/log/codec.js';
import { readRow } from '../../src/log/version-index.js';
import { checkpointFile, LevelDbLog } from '../../src/log/leveldb-log.js';
import { readParts } from '../../src/log/checkpoint-file.js';
import type { PartBytes } from '../../src/log/log.js';
import { runLogContract } from './contract.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function tempPath(): Promise<string> {
  const dir = tempDir('orchd-log-', { until: 'file' });
  // A directory that does not exist yet: the log creates it.
  return join(dir, 'log');
}

runLogContract({
  name: 'LevelDbLog',
  newLog: async () => {
    const log = new LevelDbLog({ path: await tempPath() });
    await log.open();
    return log;
  },
  reopen: async (log) => {
    await log.close();
    const next = new LevelDbLog({ path: log.path });
    await next.open();
    return next;
  },
  skip: {
    breakStorage:
      'a LevelDB opened here cannot be made to fail without fault injection; crash.test.ts fails its writes for real (a file-size limit in a child process) and the memory log runs this row on the same AbstractLog code',
  },
});

describe('LevelDbLog', () => {
  it('reports each batch to onBatch: its size and the wait of its oldest record', async () => {
    const reports: [number, number][] = [];
    const log = new LevelDbLog({ path: await tempPath(), onBatch: (size, ms) => reports.push([size, ms]) });
    await log.open();
    try {
      await Promise.all(Array.from({ length: 7 }, (_, i) => log.append({ type: 'put', key: 'k', value: i }).durable));
      await log.append({ type: 'put', key: 'k', value: 'one' }).durable;
      expect(reports.map(([size]) => size)).toEqual([7, 1]);
      for (const [, ms] of reports) expect(ms).toBeGreaterThan(0);
    } finally {
      await log.close();
    }
  });

  it('a compaction leaves what it removed in none of the log files (LevelDB compacts the range)', async () => {
    const path = await tempPath();
    const log = new LevelDbLog({ path });
    await log.open();
    const marker = `GONE${Date.now()}`;
    try {
      for (let i = 0; i < 20; i++) await log.append({ type: 'put', key: `k${i}`, value: { note: `${marker}-${i}` } }).durable;
      await log.append({ type: 'put', key: 'kept', value: { note: 'KEPT' } }).durable;
      const onDisk = async (text: string) => {
        const files = await readdir(path);
        const bytes = await Promise.all(files.map((f) => readFile(join(path, f))));
        return bytes.some((b) => b.includes(Buffer.from(text)));
      };
      expect(await onDisk(marker)).toBe(true);
      await log.compact(log.lastSeq);
      expect(await onDisk(marker)).toBe(false);
      expect(await onDisk('KEPT')).toBe(true);
    } finally {
      await log.close();
    }
  });

  it('refuses a second open of the same directory while the first is open', async () => {
    const path = await tempPath();
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      const second = new LevelDbLog({ path });
      await expect(second.open()).rejects.toThrow(/open in this process already/);
      await second.close();
      expect(() => log.append({ type: 'put', key: 'k', value: 1 })).not.toThrow();
      // The refusal kept the lock: another process still cannot open the folder beside this one.
      const other = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', `import { Level } from 'level'; await new Level(${JSON.stringify(path)}).open().then(() => console.log('opened'), (e) => console.log(e.cause?.code))`],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(other.stdout.trim()).toBe('LEVEL_LOCKED');
    } finally {
      await log.close();
    }
  });

  it('stores entries under 8-byte big-endian seq keys, its version index and horizon after them, and the checkpoint in a file beside', async () => {
    const path = await tempPath();
    const log = new LevelDbLog({ path });
    await log.open();
    await Promise.all(Array.from({ length: 300 }, (_, i) => log.append({ type: 'put', key: `k${i}`, value: i }).durable));
    await log.compact(3);
    await log.saveCheckpoint({
      seq: 300,
      parts: (async function* () {
        yield [new Uint8Array([1])];
      })(),
    });
    await log.close();

    const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      const all = await db.iterator().all();
      const entryRows = all.filter(([k]) => k[0] === 0x00);
      expect(entryRows.every(([k]) => k.length === 8)).toBe(true);
      // Byte order is seq order, across the 255/256 boundary too.
      expect(entryRows.map(([k]) => readSeq(k))).toEqual(Array.from({ length: 298 }, (_, i) => i + 3));
      expect(entryRows.map(([k, v]) => decodeEntry(readSeq(k), v).value)).toEqual(Array.from({ length: 298 }, (_, i) => i + 2));
      const metaRows = all.slice(entryRows.length);
      // The version index's rows (0xff 0x01, the object key, 0x00, the seq) sort before the named meta keys.
      const indexRows = metaRows.filter(([k]) => k[1] === 0x01);
      expect(indexRows.map(([k, v]) => readRow(k, v)).sort((a, b) => a.version - b.version)).toEqual(Array.from({ length: 298 }, (_, i) => ({ key: `k${i + 2}`, version: i + 3 })));
      expect(indexRows[0][0]).toEqual(Buffer.concat([Buffer.from([0xff, 0x01]), Buffer.from('k10'), Buffer.from([0]), seqKey(11)]));
      expect(metaRows.slice(indexRows.length).map(([k]) => k.subarray(1).toString('latin1'))).toEqual(['horizon', 'index']);
      expect(metaRows.every(([k]) => k[0] === 0xff)).toBe(true);
      // Kept out of LevelDB so that writing a big one never holds appends behind it.
      // seq, the mark, then each part behind its 4-byte length.
      expect([...(await readFile(checkpointFile(path)))]).toEqual([0, 0, 0, 0, 0, 0, 1, 44, ...Buffer.from('orchd-cp'), 0, 0, 0, 1, 1]);
      expect(await readdir(path)).not.toContain('orchd-checkpoint.tmp');
    } finally {
      await db.close();
    }
  });

  it("a checkpoint file without the mark (an older orchd's) is no checkpoint; one cut inside a part fails as it is read", async () => {
    const path = await tempPath();
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      await log.append({ type: 'put', key: 'k', value: 1 }).durable;
      await writeFile(checkpointFile(path), Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]), Buffer.from('orchd-checkpoint/3\n')]));
      expect(await log.loadCheckpoint()).toBeUndefined();
      await writeFile(checkpointFile(path), Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]), Buffer.from('orchd-cp'), Buffer.from([0, 0, 0, 9, 1, 2])]));
      const cp = await log.loadCheckpoint();
      expect(cp?.seq).toBe(1);
      const read = async () => {
        for await (const part of cp!.parts) void part;
      };
      await expect(read()).rejects.toThrow(/ends inside a part/);
    } finally {
      await log.close();
    }
  });

  it('a read copies its pages into buffers that grow from its first page: a short read holds what it read, a long one shares buffers between pages', async () => {
    const log = new LevelDbLog({ path: await tempPath() });
    await log.open();
    try {
      const note = 'x'.repeat(200);
      for (let i = 0; i < 3500; i += 500) {
        const appended = Array.from({ length: 500 }, (_, j) => log.append({ type: 'put', key: `k${i + j}`, value: { note, i: i + j } }).durable);
        await Promise.all(appended);
      }
      const readAll = async (from: number, to: number) => {
        const out: StoredEntry[] = [];
        for await (const page of log.read(from, to)) out.push(...(page as StoredEntry[]));
        return out;
      };
      const [one] = await readAll(7, 7);
      expect(one.bytes.buffer.byteLength).toBeLessThan(300);
      const all = await readAll(1, 3500);
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 3500 }, (_, i) => i + 1));
      expect(all.every((e) => (e.value as { i: number }).i === e.seq - 1)).toBe(true);
      const buffers = new Set(all.map((e) => e.bytes.buffer));
      // Pages of 1,000 entries: four pages in fewer buffers, each page within one.
      expect(buffers.size).toBeLessThan(4);
      for (let p = 0; p < 3500; p += 1000) expect(new Set(all.slice(p, p + 1000).map((e) => e.bytes.buffer)).size).toBe(1);
    } finally {
      await log.close();
    }
  });

  it("reads a checkpoint's parts only where asked, large ranges into shared buffers, and closes the file once each part was read to its end; a cut file fails at its cut", async () => {
    const path = await tempPath();
    const log = new LevelDbLog({ path });
    await log.open();
    try {
      await log.append({ type: 'put', key: 'k', value: 1 }).durable;
      const file = checkpointFile(path);
      // Parts of 0 to 60 bytes, and three of 2 MiB: those are read into one shared buffer.
      const small = Array.from({ length: 40 }, (_, i) => Buffer.alloc((i * 37) % 61, i));
      const big = [1, 2, 3].map((i) => Buffer.alloc(2 << 20, i));
      const parts = [...small, ...big];
      await log.saveCheckpoint({
        seq: 1,
        parts: (async function* () {
          for (const p of parts) yield [p];
        })(),
      });
      const opened = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`) === file;
          } catch {
            return false;
          }
        }).length;
      const stored: PartBytes[] = [];
      for await (const p of readParts(file, 1)) stored.push(p);
      expect(stored.map((p) => p.length)).toEqual(parts.map((p) => p.length));
      // Read in pieces, out of order: each range is the part's bytes there.
      expect(stored[1].read(2, 9)).toEqual(parts[1].subarray(2, 9));
      expect(() => stored[1].read(30, 40)).toThrow(RangeError);
      expect(opened()).toBe(1);
      const whole = stored.map((p, i) => (i === 1 ? Buffer.concat([p.read(0, 2), p.read(2, p.length)]) : p.read(0, p.length)));
      // Buffer.equals, not toEqual: vitest compares 6 MiB of buffers byte by byte as an iterable (a minute).
      expect(whole.map((b, i) => b.equals(parts[i]))).toEqual(parts.map(() => true));
      expect(new Set(whole.slice(-3).map((b) => b.buffer)).size).toBe(1);
      expect(opened()).toBe(0);
      expect(() => stored[1].read(0, 1)).toThrow(/after every part was read/);
      // Stopped early: the file is closed at once.
      for await (const p of readParts(file, 1)) if (p) break;
      expect(opened()).toBe(0);
      const bytes = await readFile(file);
      await writeFile(file, bytes.subarray(0, bytes.length - 5));
      const cut = async () => {
        for await (const p of readParts(file, 1)) void p;
      };
      await expect(cut()).rejects.toThrow(/ends inside a part/);
      expect(opened()).toBe(0);
    } finally {
      await log.close();
    }
  });

  it('a record made around a value already in msgpack (export, import) is byte for byte what append writes, with every key head', () => {
    // A key past 31 and past 255 bytes takes the longer string heads.
    const records = [
      { type: 'put' as const, key: 'c//a', value: { n: 1, s: 'ä' } },
      { type: 'put' as const, key: `c//${'k'.repeat(40)}`, value: { n: 2 } },
      { type: 'delete' as const, key: `c//${'z'.repeat(300)}`, value: { n: 3 } },
    ];
    for (const r of records) {
      const stored = encodeStoredRecord(r.type, r.key, packJson(r.value));
      expect(stored.equals(encodeRecord(r))).toBe(true);
      const e = decodeEntry(7, stored);
      expect([e.seq, e.type, e.key, e.value]).toEqual([7, r.type, r.key, r.value]);
    }
  });
});
