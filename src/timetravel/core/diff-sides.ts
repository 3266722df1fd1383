/**
 * What `orchd diff A B` compares: two versions of the one history the source flags name
 * (`orchd diff 48211 HEAD --data-dir ./what-if`), or two histories, each a data folder or a
 * recording at a version (`orchd diff incident.orchlog@48211 ./what-if`: at its head when no version
 * is given). Two histories show where a fork and its original part ways, object by object.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { TimeTravelUsageError } from './errors.js';
import type { EncryptionConfiguration } from '../../config/encryption.js';
import { resolveVersion, type History } from './history.js';
import { parseVersionSpec, ZonelessTime, type VersionSpec } from './version-spec.js';
import { TimeTravelError } from './errors.js';

/** One side of a diff: a history at a version; source names it when the two sides are two histories. */
export interface DiffSide {
  history: History;
  rv: number;
  source?: string;
}

type Word = { version: VersionSpec } | { source: string; version: VersionSpec };

/** A word of the command line: a version (RV, TIME, HEAD), or FOLDER|RECORDING[@RV|TIME|HEAD]; name (A or B) for its errors. */
function wordOf(text: string, name: string): Word {
  // A time without a zone is refused as --at refuses it, not taken for a folder's name.
  const refuseZoneless = (err: unknown) => {
    if (err instanceof ZonelessTime) throw new TimeTravelUsageError(`${name}: ${err.message}`);
  };
  try {
    return { version: parseVersionSpec(text) };
  } catch (err) {
    refuseZoneless(err);
    // Not a version: a source, with its version after the last @ when one is given.
  }
  const at = text.lastIndexOf('@');
  if (at > 0) {
    try {
      return { source: text.slice(0, at), version: parseVersionSpec(text.slice(at + 1)) };
    } catch (err) {
      refuseZoneless(err);
      // A path with an @ in it.
    }
  }
  return { source: text, version: { head: true } };
}

/** The two words as versions of one history, or as two sources; a mix of both is a usage error. */
export function parseSides(words: string[]): { versions: [VersionSpec, VersionSpec] } | { sources: [{ source: string; version: VersionSpec }, { source: string; version: VersionSpec }] } {
  const [a, b] = [wordOf(words[0], 'A'), wordOf(words[1], 'B')];
  if (!('source' in a) && !('source' in b)) return { versions: [a.version, b.version] };
  if ('source' in a && 'source' in b) return { sources: [a, b] };
  throw new TimeTravelUsageError(
    'give two versions of one history (RV, TIME or HEAD, with --data-dir, --server or --file), or two histories (FOLDER or RECORDING, each with an optional @RV|TIME|HEAD)',
  );
}

/** A source as a history: a folder is a data folder, a file a recording. */
async function openSource(source: string, encryption: EncryptionConfiguration | undefined): Promise<History> {
  const st = await stat(source).catch(() => undefined);
  if (!st) throw new TimeTravelError(`${source}: no such data folder or recording`);
  if (st.isDirectory()) return (await import('../sources/data-dir.js')).openDataDir(source, encryption);
  return (await import('../sources/recording.js')).openRecordingHistory(source);
}

/** Opens both histories, each at its version, runs the diff on them and closes them. */
export async function withSources<T>(
  sides: [{ source: string; version: VersionSpec }, { source: string; version: VersionSpec }],
  encryption: EncryptionConfiguration | undefined,
  run: (a: DiffSide, b: DiffSide) => Promise<T>,
): Promise<T> {
  const opened: History[] = [];
  try {
    const out: DiffSide[] = [];
    for (const s of sides) {
      const history = await openSource(s.source, encryption);
      opened.push(history);
      out.push({ history, rv: await resolveVersion(history, `${s.source} at`, s.version), source: s.source });
    }
    return await run(out[0], out[1]);
  } finally {
    for (const h of opened) await h.close();
  }
}

/**
 * Where two histories part, when the fork points a forked folder keeps (fork.json) tell: one is a
 * fork of the other, or both are forks of one source. undefined when neither says.
 */
export async function partingOf(a: string, b: string): Promise<string | undefined> {
  const { readForkPoints } = await import('../../config/fork-origin.js');
  const pointsOf = async (s: string) => ((await stat(s).catch(() => undefined))?.isDirectory() ? readForkPoints(s).catch(() => []) : []);
  const [pa, pb] = [await pointsOf(a), await pointsOf(b)];
  const from = (points: typeof pa, source: string) => points.filter((p) => resolve(p.source) === resolve(source)).at(-1);
  const bOfA = from(pb, a);
  if (bOfA) return `${b} is a fork of ${a} at ${bOfA.at}: the same history up to version ${bOfA.at}, they part from ${bOfA.at + 1}`;
  const aOfB = from(pa, b);
  if (aOfB) return `${a} is a fork of ${b} at ${aOfB.at}: the same history up to version ${aOfB.at}, they part from ${aOfB.at + 1}`;
  for (const p of pa) {
    const q = from(pb, p.source);
    if (q) {
      const at = Math.min(p.at, q.at);
      return `both are forks of ${p.source}, ${a} at ${p.at} and ${b} at ${q.at}: the same history up to version ${at}, they part from ${at + 1}`;
    }
  }
  return undefined;
}
