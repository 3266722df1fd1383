/**
 * The data folder: made (or refused in one line that says why) before anything opens, and the
 * continue-token key kept in it.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';

/**
 * Makes the data folder (and missing parents) or says in one line why it cannot. Not mkdir's
 * `recursive`: on a path such as /proc/nope, Node's recursive mkdir never returns.
 */
export async function prepareDataDir(dir: string): Promise<void> {
  const fail = (what: string): never => {
    throw new Error(`data folder ${dir}: ${what}`);
  };
  const missing: string[] = [];
  for (let p = resolve(dir); ; p = dirname(p)) {
    const st = await stat(p).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : fail(`cannot use it: ${err.message}`)));
    if (st?.isDirectory()) break;
    if (st) fail(p === resolve(dir) ? 'it is a file, not a folder' : `cannot create it: ${p} is a file, not a folder`);
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing) await mkdir(p).catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : fail(`cannot create it: ${err.message}`)));
}

export const messageWithCause = (err: unknown): string => {
  const e = err as { message?: string; cause?: { message?: string } };
  return e.cause?.message ? `${String(e.message)}: ${e.cause.message}` : String(e.message ?? err);
};

/** The continue-token key lives with the data, so tokens survive a restart of the same server. */
export async function loadSecret(dataDir: string | undefined): Promise<Buffer> {
  if (dataDir === undefined) return randomBytes(32);
  const file = join(dataDir, 'continue-token.key');
  try {
    return await readFile(file);
  } catch {
    const key = randomBytes(32);
    await writeFile(file, key, { mode: 0o600 });
    return key;
  }
}
