/**
 * A snapshot of a LevelDB log folder that a running server may be writing, made in moments whatever
 * the log's size. LevelDB allows one process at a time (its LOCK file) and opening a folder writes
 * to it (recovery makes a new write-ahead log and manifest), so a reader never opens the data folder
 * itself: it opens a snapshot of it. A table file (.ldb, .sst) never changes once written, so the
 * snapshot hard-links it rather than copying it: a link to a file LevelDB then deletes keeps the
 * bytes for the snapshot. The checkpoint file is replaced by a rename, never rewritten, so it is
 * linked too. The small files that do change (CURRENT, the MANIFEST, the write-ahead log) are copied.
 *
 * Order makes it whole: the checkpoint first (so it is never newer than the log beside it), then
 * CURRENT, the manifest and the write-ahead log, then the tables. A table the copied manifest names
 * was in the folder when the manifest was copied, so it is linked unless a compaction deleted it in
 * between, which fails the link (ENOENT): the snapshot is then made again, a few times. Tables newer
 * than the copied manifest are linked too and deleted by LevelDB as unknown when the snapshot opens.
 * A batch written during the copy of the write-ahead log is there whole or not at all, since
 * LevelDB's recovery drops a torn record at its end. Where the temp folder is on another file system
 * than the data folder (no hard links across them), tables are copied.
 *
 * The file system calls are synchronous: a snapshot is a few hundred links made one after another
 * by a command with nothing else to do meanwhile, and a promise each cost it three times the CPU.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { checkpointFile } from '../../log/leveldb-log.js';

const TRIES = 5;
const isTable = (name: string): boolean => name.endsWith('.ldb') || name.endsWith('.sst');
/** Not part of the log: the lock, LevelDB's own text log, a checkpoint being written. */
const isSkipped = (name: string): boolean => name === 'LOCK' || name === 'LOG' || name === 'LOG.old' || name.endsWith('.tmp');

/** Makes `to` a snapshot of the log folder `folder` (see the top of this file). */
export async function snapshotLogFolder(folder: string, to: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      snapshotOnce(folder, to);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || tries === TRIES) throw err;
      rmSync(to, { recursive: true, force: true });
    }
  }
}

function snapshotOnce(folder: string, to: string): void {
  mkdirSync(to, { recursive: true });
  // The checkpoints (the whole one and the index copies along the log) before the log they name.
  const checkpoint = basename(checkpointFile(folder));
  const isCheckpoint = (n: string): boolean => n === checkpoint || (n.startsWith(`${checkpoint}.`) && !n.endsWith('.tmp'));
  for (const n of readdirSync(folder).filter(isCheckpoint)) {
    try {
      linkOrCopy(join(folder, n), join(to, n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  const names = readdirSync(folder).filter((n) => !isSkipped(n) && !isCheckpoint(n));
  // CURRENT before the manifest it names, both before the tables that manifest lists.
  const small = names.filter((n) => !isTable(n)).sort((a, b) => (a === 'CURRENT' ? -1 : b === 'CURRENT' ? 1 : 0));
  for (const n of small) copyFileSync(join(folder, n), join(to, n));
  const tables = readdirSync(folder).filter(isTable);
  for (const n of tables) linkOrCopy(join(folder, n), join(to, n));
}

function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Another file system, or one without hard links: the bytes are copied instead.
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
    copyFileSync(from, to);
  }
}

/** Why a snapshot could not be made, in a few words: no log there (no CURRENT), a file the user may not read, else the error's own message. */
export function snapshotProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT' && e.path?.endsWith('CURRENT')) return 'no LevelDB log there (no CURRENT file)';
  if (e.code === 'EACCES' || e.code === 'EPERM') return `permission denied${e.path ? ` (${e.path})` : ''}`;
  return e.message ?? String(err);
}

/**
 * Snapshot folders not yet removed by their history's close. A command that ends early (`orchd log |
 * head`: the reader went, and the process exits at once) would leave them in the temp folder.
 */
const SNAPSHOTS = new Set<string>();
let exitHook = false;

export function removedAtExit(work: string): void {
  if (!exitHook) process.once('exit', () => SNAPSHOTS.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  exitHook = true;
  SNAPSHOTS.add(work);
}

/** A snapshot its history's close removed: no longer for the exit to remove. */
export function removedNow(work: string): void {
  SNAPSHOTS.delete(work);
}
