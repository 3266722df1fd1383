/**
 * The timetravel scenario's checkpoint figures (issue 40, checkpoints along the log), on a copy of
 * the cached seeded folder: two stops of `orchd serve` with WRITES writes between them leave a whole
 * checkpoint and index copies along the log (src/log/checkpoint-file.ts). Then:
 *
 *   restart to ready with every checkpoint, with the newest deleted (the whole one and its index
 *   copy: the restart starts from the older copy, reads its objects from the log and folds the rest),
 *   and with none (the whole log folded);
 *   `state --at` the middle with only the copies along the log (the whole one deleted);
 *   the disk the checkpoints take beside the log's own files.
 */
import { cp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpClient } from './http-client.js';
import { Orchd } from './orchd.js';
import { eventsPath } from './payload.js';

/** Writes between the two stops: what a restart from the older copy folds. */
const WRITES = 500;

export interface CheckpointFigures {
  /** Seconds from spawn to ready. */
  restartAll: number;
  restartNewestDeleted: number;
  restartNone: number;
  /** The version the restart without the newest started from, and the newest's. */
  olderSeq: number;
  newestSeq: number;
  /** Bytes of the whole checkpoint, of the copies along the log, and of the log's own files. */
  wholeBytes: number;
  alongBytes: number;
  alongCount: number;
  logBytes: number;
}

const CHECKPOINT = 'orchd-checkpoint';

async function serveAndWrite(cli: string, dataDir: string, args: string[], limitMs: number, hot: string): Promise<void> {
  // The stop saves the whole checkpoint and its copy. At 1M, loaded, that took longer than the
  // server's own shutdown limit (--shutdown-timeout, 10 s, + 30 s): it exited 1 with a .tmp and no
  // copy, the row failed, and the table (rows with figures only) came out empty at 1M.
  const stopping = ['--shutdown-timeout', `${Math.round(limitMs / 1000)}s`];
  const { orchd, ready } = await Orchd.start({ cli, dataDir, args: [...args, ...stopping], readyTimeoutMs: limitMs });
  const http = new HttpClient(ready.url, 1);
  try {
    for (let i = 0; i < WRITES; i++) {
      const body = Buffer.from(JSON.stringify({ metadata: { labels: { along: String(i) } } }));
      const r = await http.request('PATCH', `${eventsPath()}/${hot}`, body, { contentType: 'application/merge-patch+json' });
      if (r.status !== 200) throw new Error(`patch ${hot}: ${r.status}`);
    }
  } finally {
    http.close();
    // Orchd.stop's grace (60 s before SIGKILL) is shorter than that save too.
    const { code, signal } = await orchd.child.stop('SIGTERM', limitMs);
    if (code !== 0) throw new Error(`orchd serve on ${dataDir} did not stop cleanly while saving its checkpoint (code ${code}, signal ${signal})`);
  }
}

async function timedStart(cli: string, dataDir: string, args: string[], limitMs: number): Promise<number> {
  const started = performance.now();
  const { orchd } = await Orchd.start({ cli, dataDir, args, readyTimeoutMs: limitMs });
  const seconds = (performance.now() - started) / 1000;
  await orchd.stop();
  return seconds;
}

/** The checkpoints in the log folder, newest first, by their names' seqs (the whole one as seq Infinity). */
async function checkpoints(log: string): Promise<{ name: string; seq: number; bytes: number }[]> {
  const out = [];
  for (const name of await readdir(log)) {
    if (name !== CHECKPOINT && !/^orchd-checkpoint\.\d{16}$/.test(name)) continue;
    out.push({ name, seq: name === CHECKPOINT ? Infinity : Number(name.slice(CHECKPOINT.length + 1)), bytes: (await stat(join(log, name))).size });
  }
  return out.sort((a, b) => b.seq - a.seq);
}

/** Measures on a copy of dataDir (removed after); the copy is work/along. */
export async function checkpointFigures(cli: string, dataDir: string, work: string, args: string[], limitMs: number, hot: string): Promise<CheckpointFigures> {
  const copy = join(work, 'along');
  await cp(dataDir, copy, { recursive: true });
  try {
    const log = join(copy, 'log');
    const seeded = (await checkpoints(log)).filter((c) => c.name !== CHECKPOINT).length;
    await serveAndWrite(cli, copy, args, limitMs, hot);
    await serveAndWrite(cli, copy, args, limitMs, hot);
    const all = await checkpoints(log);
    const along = all.filter((c) => c.name !== CHECKPOINT);
    // Counted against the copies the seeded folder came with (the 1M folder has two of its own).
    if (along.length < seeded + 2) throw new Error(`expected two new copies along the log after two stops, found ${along.map((c) => c.name).join(', ') || 'none'} (a build without them?)`);
    const wholeBytes = all.find((c) => c.name === CHECKPOINT)?.bytes ?? 0;
    let logBytes = 0;
    for (const name of await readdir(log)) if (!name.startsWith(CHECKPOINT)) logBytes += (await stat(join(log, name))).size;
    const restartAll = await timedStart(cli, copy, args, limitMs);
    // The stop above saved nothing new: the same newest checkpoint, deleted whole and copy.
    await rm(join(log, CHECKPOINT));
    await rm(join(log, along[0].name));
    const restartNewestDeleted = await timedStart(cli, copy, args, limitMs);
    for (const c of await checkpoints(log)) await rm(join(log, c.name));
    const restartNone = await timedStart(cli, copy, args, limitMs);
    return {
      restartAll,
      restartNewestDeleted,
      restartNone,
      olderSeq: along[1].seq,
      newestSeq: along[0].seq,
      wholeBytes,
      alongBytes: along.reduce((n, c) => n + c.bytes, 0),
      alongCount: along.length,
      logBytes,
    };
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}
