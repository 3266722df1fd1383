/**
 * Where a time-travel command reads its history (exactly one of a data folder, a running server or
 * a recording), the flags that say so and the ones that filter what it reads: one table each, shared
 * by every command. What only some sources need (the HTTP reader, encryption at rest, the store) is
 * imported when they are opened: a command's own time includes node loading modules.
 */
import { TimeTravelUsageError, type Notes } from './errors.js';
import type { EncryptionConfiguration } from '../../config/encryption.js';
import { TimeTravelError } from './errors.js';
import { resolveVersion, type History } from './history.js';
import type { VersionSpec } from './version-spec.js';

/** Whether a change (or a refused write, which has a user and no manager) was made by whom the flags ask for. */
export const madeBy =
  (v: { user?: string; manager?: string }) =>
  (c: { writer?: { user: string; manager?: string }; user?: string; manager?: string }): boolean =>
    (v.user === undefined || (c.writer?.user ?? c.user) === v.user) && (v.manager === undefined || (c.writer?.manager ?? c.manager) === v.manager);

interface SourceValues {
  'data-dir'?: string;
  server?: string;
  file?: string;
  'encryption-provider-config'?: string;
}

/** The EncryptionConfiguration in file, checked as the server checks it. */
export async function encryptionFrom(file: string | undefined): Promise<EncryptionConfiguration | undefined> {
  if (file === undefined) return undefined;
  const { loadServerConfig } = await import('../../config/server-config.js');
  const { problemLine } = await import('../../config/load.js');
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new TimeTravelError(loaded.problems.map(problemLine).join('; '));
  return loaded.config.encryption!.value;
}

/** The history the flags name: exactly one of --data-dir, --server and --file; a data folder is only read, never written (../sources/data-dir.ts). */
export async function openHistory(values: SourceValues): Promise<History> {
  const given = (['data-dir', 'server', 'file'] as const).filter((f) => values[f] !== undefined);
  if (given.length !== 1) throw new TimeTravelUsageError(`give exactly one of --data-dir, --server and --file${given.length > 1 ? ` (not ${given.map((f) => `--${f}`).join(' and ')})` : ''}`);
  if (values['encryption-provider-config'] !== undefined && values['data-dir'] === undefined) throw new TimeTravelUsageError('--encryption-provider-config goes with --data-dir');
  if (values.server !== undefined) return (await import('../sources/running-server.js')).openServer(values.server);
  if (values.file !== undefined) return (await import('../sources/recording.js')).openRecordingHistory(values.file);
  const encryption = await encryptionFrom(values['encryption-provider-config']);
  return (await import('../sources/data-dir.js')).openDataDir(values['data-dir']!, encryption);
}

/** Runs a command on the history the flags name, and closes it. */
export async function withHistory<T>(values: SourceValues, io: Notes, run: (h: History) => Promise<T>): Promise<T> {
  const history = await openHistory(values);
  try {
    const result = await run(history);
    // Said after the output, and only when there was some: an error stays one line.
    if (!history.timesFromLog)
      io.err.write(
        `orchd: note: times are taken from the objects' own timestamps (to the second), not from the log: ${values.server ? 'the API carries no commit times' : 'this log was written before it kept commit times'}\n`,
      );
    return result;
  } finally {
    await history.close();
  }
}

/** The version a flag names; for a time, which version it is, said on stderr (stdout stays the answer). */
export async function resolveNoted(h: History, flag: string, spec: VersionSpec, io: Notes): Promise<number> {
  const rv = await resolveVersion(h, flag, spec);
  if ('timeMs' in spec) {
    const t = await h.timeOf(rv);
    io.err.write(`orchd: ${flag} ${new Date(spec.timeMs).toISOString()} is resourceVersion ${rv}${t === undefined ? '' : `, committed at ${new Date(t).toISOString()}`}\n`);
  }
  return rv;
}

/**
 * The versions from..to a command reads: by default from the oldest readable to the head. A time
 * names the newest version committed at or before it (the state then); with entries, a --from time
 * names the first entry committed at or after it instead, so a span of times holds exactly the
 * entries committed within it.
 */
export async function rangeNoted(h: History, from: VersionSpec | undefined, to: VersionSpec | undefined, io: Notes, entries = false): Promise<{ from: number; to: number }> {
  const f = from === undefined ? h.oldest + 1 : entries && 'timeMs' in from ? await firstAfterNoted(h, from.timeMs, io) : await resolveNoted(h, '--from', from, io);
  const t = to === undefined ? h.head : await resolveNoted(h, '--to', to, io);
  if (f > t) throw new TimeTravelError(`--from ${f} is after --to ${t}${'timeMs' in (to ?? {}) || 'timeMs' in (from ?? {}) ? ': nothing was committed between those times' : ''}`);
  return { from: f, to: t };
}

/** The first entry committed at or after timeMs: the one after the newest committed before it. */
async function firstAfterNoted(h: History, timeMs: number, io: Notes): Promise<number> {
  const at = new Date(timeMs).toISOString();
  const rv = Math.max(await h.versionAt(timeMs - 1), h.oldest) + 1;
  if (rv > h.head) {
    const t = await h.timeOf(h.head);
    throw new TimeTravelError(`--from ${at}: nothing was committed at or after then: the newest version is ${h.head}${t === undefined ? '' : `, committed at ${new Date(t).toISOString()}`}`);
  }
  const t = await h.timeOf(rv);
  io.err.write(`orchd: --from ${at} is resourceVersion ${rv}${t === undefined ? '' : `, committed at ${new Date(t).toISOString()}`} (the first entry at or after it)\n`);
  return rv;
}
