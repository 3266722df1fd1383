/**
 * A fork: a new data folder whose log is a history's up to a version N (`orchd fork`, `orchd replay
 * --fork`). Its log holds the history's state at its oldest version as the entries a compaction
 * kept below the horizon, then every entry after it up to N at its own sequence number with its
 * commit time (LevelDbLog.import), so `orchd serve` on it reads, lists at a version and watches
 * from an old version as the original did, and its next write takes N + 1. fork.json beside the
 * log says where it came from (src/config/fork-origin.ts).
 *
 * The entries go from the source to the new log a page at a time as the bytes they were stored as:
 * the recording is never held in memory, and no object is decoded (except to seal it, when the
 * fork is encrypted). The folder is made beside the target under another name and renamed into
 * place once whole, so a fork that fails (a damaged recording found half-way) leaves nothing.
 * Beside the log goes an index-only checkpoint at N (checkpoint.ts), so a server on the fork is
 * ready once it has read the keys, without folding the whole history.
 *
 * A fork of a data folder (with no encryption configuration to seal it again with) is not imported:
 * it shares the source's table files and cuts its own tail after N (shared-fork.ts), in about the
 * same time at every N, and keeps the source's checkpoints up to N.
 */
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { writeForkPoints, type ForkPoint } from '../../config/fork-origin.js';
import { packJson, unpackJson } from '../../log/codec.js';
import type { EncryptionConfiguration } from '../../log/encryption/configuration.js';
import { COMMAND_KMS_WAIT_MS, ResourceProviders } from '../../log/encryption/providers.js';
import { StoredValues } from '../../log/encryption/stored-values.js';
import { LevelDbLog, type ImportedEntry } from '../../log/leveldb-log.js';
import { ForkCheckpoint } from './checkpoint.js';
import { shareLogUpTo } from './shared-fork.js';
import type { History } from '../core/history.js';
import { writerBytesOf } from '../core/entry-writers.js';
import { TimeTravelError } from '../core/errors.js';
import { progress } from '../print/progress.js';
import { stateEntries } from '../core/state-entries.js';

export interface ForkOptions {
  history: History;
  /** The last version of the history the fork takes (checked against the history by the caller). */
  at: number;
  /** The data folder to make: absent, or an empty folder. */
  target: string;
  /** What the history is read from (a recording or a data folder), for fork.json. */
  source: string;
  /** The source's own fork points, when it is itself a fork. */
  ancestors?: readonly ForkPoint[];
  /**
   * Read the history up to here (at least `at`), keeping nothing past `at`: a recording is read to
   * its end record, so one that is cut short or damaged past the fork point is still refused.
   */
  checkTo?: number;
  /** The fork's values are sealed with this configuration's first providers (as a server's writes are). */
  encryption?: EncryptionConfiguration;
  /**
   * The data folder the history is read from, when it is one: with no encryption configuration the
   * fork shares its table files and cuts the tail after `at` (shared-fork.ts) instead of importing.
   */
  sharedFrom?: string;
}

/** Refuses a target that is not absent or an empty folder: nothing is written into one that holds something. */
export async function checkForkTarget(target: string, flag = '--data-dir'): Promise<void> {
  const st = await stat(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new TimeTravelError(`${flag} ${target}: cannot use it (${err.code ?? err.message})`);
  });
  if (!st) return;
  if (!st.isDirectory()) throw new TimeTravelError(`${flag} ${target}: it is a file, not a folder`);
  if ((await readdir(target)).length > 0) throw new TimeTravelError(`${flag} ${target}: the folder exists and is not empty; a fork is made into a new or empty folder`);
}

export async function makeFork(o: ForkOptions): Promise<void> {
  await checkForkTarget(o.target);
  const target = resolve(o.target);
  // The first folder made for it, if any: a fork that fails leaves none of them.
  const madeParents = await mkdir(dirname(target), { recursive: true });
  const building = join(dirname(target), `.${basename(target)}.forking-${process.pid}`);
  await rm(building, { recursive: true, force: true });
  await mkdir(building);
  try {
    let time: number | null;
    if (o.sharedFrom !== undefined && !o.encryption) {
      await shareLogUpTo(o.sharedFrom, o.at, building);
      time = o.at > o.history.oldest ? ((await o.history.timeOf(o.at)) ?? null) : null;
    } else time = await importHistory(o, join(building, 'log'));
    const forks = [...(o.ancestors ?? []), { source: resolve(o.source), at: o.at, time, madeAt: new Date().toISOString() }];
    await writeForkPoints(building, forks);
    // Onto an empty target folder too: rename(2) replaces an empty directory.
    await rename(building, target).catch((err: NodeJS.ErrnoException) => {
      throw new TimeTravelError(`--data-dir ${o.target}: cannot put the fork there (${err.code ?? err.message}): something was written into it meanwhile`);
    });
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    if (madeParents !== undefined) await rmEmptyUpTo(dirname(target), madeParents);
    throw err;
  }
}

/**
 * The history up to `at` imported into a new log at log, entry by entry (a recording, or a folder
 * forked with an encryption configuration: its values sealed again with it), with a checkpoint at
 * `at` beside it; the commit time of `at`.
 */
async function importHistory(o: ForkOptions, log: string): Promise<number | null> {
  const { history: h, at } = o;
  const bar = progress(at - h.oldest, 'fork');
  let seal: Awaited<ReturnType<typeof sealer>> | undefined;
  try {
    if (o.encryption) seal = await sealer(o.encryption);
    const horizon = h.oldest + 1;
    let time: number | null = null;
    // Sealed values are opened by the store alone: an encrypted fork's server folds its log instead.
    const checkpoint = seal ? undefined : new ForkCheckpoint();
    const tap = (pages: AsyncIterable<ImportedEntry[]>) => (checkpoint ? checkpoint.tap(pages) : pages);
    const state = sealed(tap(stateEntries(h, h.oldest)), seal?.seal);
    const history = sealed(tap(entriesUpTo(h, horizon, at, Math.max(at, o.checkTo ?? at), bar.update, (t) => (time = t))), seal?.seal);
    await LevelDbLog.import(log, state, horizon, history);
    await checkpoint?.save(log, at);
    return time;
  } finally {
    bar.stop();
    seal?.close();
  }
}

/** Removes dir and its parents up to top (included), each only while it is empty. */
async function rmEmptyUpTo(dir: string, top: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    if (
      !(await rmdir(d).then(
        () => true,
        () => false,
      )) ||
      d === top ||
      d === dirname(d)
    )
      return;
  }
}

/**
 * The history's entries from..at as entries to import, read on to checkTo (nothing past `at` kept);
 * tells the commit time of `at` and how far it has read.
 */
async function* entriesUpTo(h: History, from: number, at: number, checkTo: number, done: (n: number) => void, timeOfAt: (t: number | null) => void): AsyncIterable<ImportedEntry[]> {
  if (checkTo < from) return;
  if (!h.storedEntries) throw new TimeTravelError('a fork is made from a data folder or a recording, not a server');
  for await (const page of h.storedEntries(from, checkTo)) {
    const kept: ImportedEntry[] = [];
    for (const e of page) {
      if (e.seq > at) break;
      kept.push({ seq: e.seq, type: e.type, key: e.key, raw: e.raw ?? packJson(e.value), time: e.time, writer: writerBytesOf(e) });
      if (e.seq === at) timeOfAt(e.time ?? null);
    }
    if (kept.length > 0) {
      done(kept[kept.length - 1].seq - from + 1);
      yield kept;
    }
  }
}

async function* sealed(pages: AsyncIterable<ImportedEntry[]>, seal: ((e: ImportedEntry) => ImportedEntry) | undefined): AsyncIterable<ImportedEntry[]> {
  for await (const page of pages) yield seal ? page.map(seal) : page;
}

/** Seals entries' values and writers as an encrypted log's append does: by the first provider of their resource. */
async function sealer(config: EncryptionConfiguration): Promise<{ seal(e: ImportedEntry): ImportedEntry; close(): void }> {
  const providers = new ResourceProviders(config);
  providers.start();
  if (!(await providers.ready(COMMAND_KMS_WAIT_MS))) {
    const problems = providers.health().map((p) => `${p.name}: ${p.problem}`);
    providers.close();
    throw new TimeTravelError(`the KMS plugins did not answer within ${COMMAND_KMS_WAIT_MS / 1000} s: ${problems.join('; ')}`);
  }
  const values = new StoredValues(providers);
  return {
    seal: (e) => {
      if (values.storesPlainly(e.key)) return e;
      const open = (b: Uint8Array) => unpackJson(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
      return { ...e, raw: packJson(values.seal(e.key, open(e.raw))), writer: e.writer && (values.seal(e.key, open(e.writer)) as Uint8Array) };
    },
    close: () => providers.close(),
  };
}
