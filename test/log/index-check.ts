import { Level } from 'level';
import { expect } from 'vitest';
import { decodeEntry, readSeq } from '../../src/log/codec.js';
import type { VersionIndex } from '../../src/log/log.js';
import { INDEX_RANGE, readRow } from '../../src/log/version-index.js';

/** A stored entry as the index must know it. */
export interface StoredVersion {
  seq: number;
  key: string;
  type: 'put' | 'delete';
}

/** Every entry stored in a LevelDB log folder (below the horizon too), and every index row, read raw. */
export async function rawFolder(path: string): Promise<{ entries: StoredVersion[]; rows: { key: string; version: number }[] }> {
  const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  const entries: StoredVersion[] = [];
  const rows: { key: string; version: number }[] = [];
  try {
    for await (const [k, v] of db.iterator({ lt: Buffer.from([0xff]) })) {
      const e = decodeEntry(readSeq(k), v);
      entries.push({ seq: e.seq, key: e.key, type: e.type });
    }
    for await (const [k, v] of db.iterator(INDEX_RANGE)) rows.push(readRow(k, v));
  } finally {
    await db.close();
  }
  return { entries, rows };
}

/** Each key's versions, folded from stored entries in seq order: what the index must say. */
export function foldVersions(entries: readonly StoredVersion[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of [...entries].sort((a, b) => a.seq - b.seq)) {
    let list = out.get(e.key);
    if (!list) out.set(e.key, (list = []));
    list.push(e.type === 'delete' ? -e.seq : e.seq);
  }
  return out;
}

/** The keys live at seq with their versions' seqs, in key order, folded from the stored entries. */
export function foldLive(entries: readonly StoredVersion[], prefix: string, seq: number): { key: string; seq: number }[] {
  const out: { key: string; seq: number }[] = [];
  for (const [key, versions] of foldVersions(entries)) {
    if (!key.startsWith(prefix)) continue;
    const newest = versions.filter((v) => Math.abs(v) <= seq).pop();
    if (newest !== undefined && newest > 0) out.push({ key, seq: newest });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

async function all<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const p of pages) out.push(...p);
  return out;
}

/** The index answers, for every key and at each of seqs, what folding the stored entries answers. */
export async function expectIndexAnswersAsFold(index: VersionIndex, entries: readonly StoredVersion[], seqs: readonly number[], prefixes: readonly string[] = ['']): Promise<void> {
  for (const [key, versions] of foldVersions(entries)) expect(await index.versionsOf(key), key).toEqual(versions);
  for (const seq of seqs) for (const prefix of prefixes) expect(await all(index.liveAt(prefix, seq)), `live at ${seq} under '${prefix}'`).toEqual(foldLive(entries, prefix, seq));
}
