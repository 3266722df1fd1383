/**
 * Where a forked data folder came from (`orchd fork`): `fork.json` beside its log, written once when
 * the fork is made and only read after. A fork of a fork lists every fork point, oldest first, so
 * the /debug/timeline page of the newest one marks them all.
 *
 *   {"forks": [{"source": "/incidents/incident.orchlog", "at": 48211, "time": 1795000000000, "madeAt": "2026-11-27T10:00:00.000Z"}]}
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One fork point: the history up to `at` is `source`'s, what comes after is the branch's. */
export interface ForkPoint {
  /** The recording or data folder forked (an absolute path). */
  source: string;
  /** The last version taken from it. */
  at: number;
  /** The commit time of that version (ms), when the source kept one. */
  time: number | null;
  /** When the fork was made (RFC 3339). */
  madeAt: string;
}

export const forkFile = (dataDir: string): string => join(dataDir, 'fork.json');

/** The fork points of a data folder, oldest first; [] for a folder that is no fork. */
export async function readForkPoints(dataDir: string): Promise<ForkPoint[]> {
  let text: string;
  try {
    text = await readFile(forkFile(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const forks = (JSON.parse(text) as { forks?: unknown }).forks;
  if (!Array.isArray(forks) || !forks.every(isForkPoint)) throw new Error(`${forkFile(dataDir)}: not a list of fork points`);
  return forks;
}

export async function writeForkPoints(dataDir: string, forks: readonly ForkPoint[]): Promise<void> {
  await writeFile(forkFile(dataDir), JSON.stringify({ forks }, null, 2) + '\n');
}

function isForkPoint(v: unknown): v is ForkPoint {
  const f = v as Partial<ForkPoint> | null;
  return f !== null && typeof f === 'object' && typeof f.source === 'string' && typeof f.at === 'number' && (f.time === null || typeof f.time === 'number') && typeof f.madeAt === 'string';
}
