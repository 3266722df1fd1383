/**
 * A fork of a data folder that shares the source's immutable data instead of copying it (issue 40,
 * as RocksDB's Checkpoint does): the fork's log folder is a snapshot of the source's
 * (../sources/log-snapshot.ts: LevelDB's table files hard-linked, since LevelDB never changes one once
 * written; CURRENT, the manifest and the write-ahead log copied; copies where links cannot be made,
 * across file systems), then ended at N in the fork alone (src/log/leveldb-tail-cut.ts: an end key
 * the log reads as its last entry; the source's entries past N stay in the shared tables, unread,
 * until the fork's own writes replace them), and every checkpoint file newer than N is removed from
 * it. The source is only read: a link adds a name to a file, not a byte, and LevelDB deletes a table
 * by unlinking its own name for it.
 *
 * What it costs is the snapshot (a link per table, a copy of a few small files), two keys written,
 * and an index-only checkpoint at N cut from a later one's heads (writeIndexAt): about the same at every
 * N, nothing like a copy of the history. The source's checkpoints at or before N stay too.
 *
 * The entries are shared as stored, so a sealed one (encryption at rest) stays sealed: a fork is
 * refused without the configuration the source was written with, as a fork that reads them is. With
 * one given, the fork takes the other way (fork.ts): its values are opened and sealed again with the
 * configuration's first providers, as a server's writes are.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { checkpointsBeside, saveAlongFile } from '../../log/checkpoint-file.js';
import { checkpointFile } from '../../log/leveldb-log.js';
import { cutTailAfter } from '../../log/leveldb-tail-cut.js';
import { indexCutAt } from '../../store/checkpoint-reader.js';
import { TimeTravelError } from '../core/errors.js';
import { logFolderOf } from '../sources/data-dir.js';
import { snapshotLogFolder, snapshotProblem } from '../sources/log-snapshot.js';

/** Makes building/log the source data folder's log up to `at`, sharing its table files. */
export async function shareLogUpTo(sourceDataDir: string, at: number, building: string): Promise<void> {
  const folder = await logFolderOf(sourceDataDir);
  const log = join(building, 'log');
  try {
    await snapshotLogFolder(folder, log);
  } catch (err) {
    throw new TimeTravelError(`--source-data-dir ${sourceDataDir}: cannot read its log (${folder}): ${snapshotProblem(err)}`, { cause: err });
  }
  await writeIndexAt(log, at);
  await dropCheckpointsAfter(log, at);
  let cut: Awaited<ReturnType<typeof cutTailAfter>>;
  try {
    cut = await cutTailAfter(log, at);
  } catch (err) {
    throw new TimeTravelError(`--source-data-dir ${sourceDataDir}: cannot fork its log at ${at}: ${(err as Error).message}`, { cause: err });
  }
  if (cut.sealed) {
    const { seq, key } = cut.sealed;
    throw new TimeTravelError(`log entry ${seq} (${key}) cannot be read: it is encrypted at rest; an encrypted log needs the --encryption-provider-config it was written with`);
  }
}

/**
 * Writes the index-only checkpoint at `at` beside the fork's log when none is there: cut from the
 * oldest checkpoint past `at` (a copy along the log before a whole one: it is the heads alone), before
 * those are removed. The fork's server is then ready once it has read the keys, at every N, where it
 * folded the log from the nearest older checkpoint (at the middle of a 1M-entry folder with none near
 * it, 500k entries: bench/RESULTS.md section 57).
 */
async function writeIndexAt(log: string, at: number): Promise<void> {
  const file = checkpointFile(log);
  const all = checkpointsBeside(file);
  if (all.some((c) => c.seq === at)) return;
  const later = all.filter((c) => c.seq > at).sort((a, b) => a.seq - b.seq || Number(b.indexOnly) - Number(a.indexOnly))[0];
  const cut = later && indexCutAt(later.file, at);
  if (cut) await saveAlongFile(file, cut);
}

/**
 * Removes the checkpoints beside the log folder (the whole one and its copies along the log) whose
 * version is past `at`: the fork's log ends at `at`, and a restart from a newer checkpoint would
 * bring back what the fork cut. Those at or before `at` stay: a restart starts from the nearest.
 */
async function dropCheckpointsAfter(log: string, at: number): Promise<void> {
  for (const c of checkpointsBeside(checkpointFile(log))) if (c.seq > at) await rm(c.file, { force: true });
}
