/**
 * The history in a data folder. LevelDB allows one process at a time (its LOCK file), and the folder
 * may belong to a running orchd, so this reads a short-lived copy of the log folder, made in a temp
 * folder and removed on close; the data folder itself is never opened or changed. LevelDB's table
 * files never change once written and its write-ahead log and manifest only grow, so a copy taken
 * while the server writes holds every batch acknowledged before the copy began: a batch written
 * during the copy is there whole or not at all, since LevelDB's recovery drops a torn record at the
 * end of its log. A table file that a compaction deletes while it is copied fails the copy, which is
 * then made again (a few times). The copy is opened as the server opens it: a Store rebuilt from the
 * checkpoint and the log's tail, whose key index answers reads at a version.
 */
import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EncryptionConfiguration } from '../../src/config/encryption.js';
import { encryptAtRest, type EncryptedLog } from '../../src/log/encryption/index.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import type { LogEntry } from '../../src/log/log.js';
import type { KubeObject } from '../../src/resources/types.js';
import { Store } from '../../src/store/store.js';
import { objectsAt, revisionsOf, versionsOf } from '../../src/store/versions.js';
import { collectionOfKind, selects, StampClock, takesKind, TimeTravelError, type Change, type Filter, type History, type Stored } from './history.js';

/** How long the tool waits for KMS plugins to answer before it gives up. */
const KMS_WAIT_MS = 30_000;
const COPY_TRIES = 5;

/** Opens a copy of a recorded log through its encryption at rest, once its KMS plugins answer. */
export async function openLogCopy(path: string, encryption: EncryptionConfiguration | undefined): Promise<EncryptedLog> {
  const log = encryptAtRest(new LevelDbLog({ path }), encryption);
  await log.open();
  if (!(await log.ready(KMS_WAIT_MS))) {
    await log.close();
    throw new TimeTravelError(`the KMS plugins did not answer within ${KMS_WAIT_MS} ms: ${log.health().map((h) => h.problem).join('; ')}`);
  }
  return log;
}

/** The data folder's log folder, or an error saying there is none. */
export async function logFolderOf(dataDir: string): Promise<string> {
  const folder = join(dataDir, 'log');
  const s = await stat(folder).catch(() => undefined);
  if (!s?.isDirectory()) throw new TimeTravelError(`--data-dir ${dataDir}: no orchd log there (no folder ${folder})`);
  return folder;
}

/** Copies a log folder that a running server may be writing (see the top of this file). */
export async function copyLogFolder(folder: string, to: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await cp(folder, to, { recursive: true, filter: (src) => !src.endsWith('LOCK') });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || tries === COPY_TRIES) throw err;
      await rm(to, { recursive: true, force: true });
    }
  }
}

export async function openDataDir(dataDir: string, encryption?: EncryptionConfiguration): Promise<History> {
  const folder = await logFolderOf(dataDir);
  const work = await mkdtemp(join(tmpdir(), 'orchd-timetravel-'));
  try {
    await copyLogFolder(folder, join(work, 'log'));
    const log = await openLogCopy(join(work, 'log'), encryption);
    const store = new Store({ log, checkpointEvery: Number.MAX_SAFE_INTEGER });
    try {
      await store.start();
      const first = log.lastSeq >= log.firstSeq ? await log.get(log.firstSeq) : undefined;
      return new DataDirHistory(store, log, work, first === undefined || first.time !== undefined);
    } catch (err) {
      await log.close();
      throw err;
    }
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

class DataDirHistory implements History {
  constructor(
    private readonly store: Store,
    private readonly log: EncryptedLog,
    private readonly work: string,
    readonly timesFromLog: boolean,
  ) {}

  get oldest(): number {
    return this.store.oldestVersion;
  }

  get head(): number {
    return this.store.appliedSeq;
  }

  /** ADDED, MODIFIED or DELETED: what a watch reports for entry e (a put after a delete adds again). */
  private typeOf(e: LogEntry): Change['type'] {
    if (e.type === 'delete') return 'DELETED';
    const revs = revisionsOf(this.store, e.key);
    const i = revs.findIndex((r) => Math.abs(r) === e.seq);
    return i > 0 && revs[i - 1] > 0 ? 'MODIFIED' : 'ADDED';
  }

  async *changes(from: number, to: number, filter: Filter): AsyncIterable<Change> {
    const clock = this.timesFromLog ? undefined : new StampClock();
    for await (const page of this.log.read(Math.max(from, 1), to)) {
      for (const e of page) {
        const time = clock ? clock.timeOf(e.value) : e.time;
        if (!takesKind(filter, e.key)) continue;
        const object = e.value as KubeObject;
        if (!selects(filter, e.key, object)) continue;
        yield { rv: e.seq, type: this.typeOf(e), key: e.key, object, time };
      }
    }
  }

  async stateAt(rv: number, filter: Filter): Promise<Stored[]> {
    const prefix = filter.namespace === undefined ? '' : `${filter.namespace}/`;
    const objects = await objectsAt(this.store, rv, filter.kinds.map(collectionOfKind), prefix);
    return objects.filter((s) => selects(filter, s.key, s.obj)).map((s) => ({ key: s.key, object: s.obj }));
  }

  async versionsOf(key: string): Promise<Change[]> {
    const clock = this.timesFromLog ? undefined : new StampClock();
    return (await versionsOf(this.store, key)).map(({ entry: e, type }) => ({ rv: e.seq, type, key, object: e.value as KubeObject, time: clock ? clock.timeOf(e.value) : e.time }));
  }

  async versionAt(timeMs: number): Promise<number> {
    const { firstSeq, lastSeq } = this.log;
    if (lastSeq < firstSeq) return 0;
    if (this.timesFromLog) {
      // Commit times never decrease along the log: the newest entry at or before timeMs, by halves.
      let lo = firstSeq - 1;
      let hi = lastSeq;
      while (lo < hi) {
        const mid = lo + Math.ceil((hi - lo) / 2);
        const t = (await this.log.get(mid))?.time ?? 0;
        if (t <= timeMs) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    const clock = new StampClock();
    let found = 0;
    for await (const page of this.log.read(firstSeq, lastSeq)) {
      for (const e of page) {
        const t = clock.timeOf(e.value);
        if (t !== undefined && t > timeMs) return found;
        found = e.seq;
      }
    }
    return found;
  }

  async close(): Promise<void> {
    try {
      await this.store.close();
      await this.log.close();
    } finally {
      await rm(this.work, { recursive: true, force: true });
    }
  }
}
