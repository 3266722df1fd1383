/** A data folder's contents, as a reader that only reads must leave them. */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';

/**
 * What a data folder holds apart from LevelDB's own bookkeeping, which any open of the log rewrites
 * (its info LOG, manifest, a write-ahead log folded into a table): every key and value of the log,
 * then every other file's bytes. A reader that only reads leaves it as it was.
 */
export async function folderContents(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  const db = new Level<Buffer, Buffer>(join(dir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    for await (const [k, v] of db.iterator()) parts.push(k, v);
  } finally {
    await db.close();
  }
  const leveldb = /^(\d+\.(log|ldb|sst)|MANIFEST-\d+|CURRENT|LOCK|LOG(\.old)?)$/;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && !(e.parentPath === join(dir, 'log') && leveldb.test(e.name))) parts.push(Buffer.from(e.name), await readFile(join(e.parentPath, e.name)));
  }
  return Buffer.concat(parts);
}

/**
 * Every file of a folder, LevelDB's own included, as path and bytes in path order: what a reader
 * that must not write at all (a fork of the folder) leaves exactly as it was.
 */
export async function folderBytes(dir: string): Promise<Buffer> {
  const files = (await readdir(dir, { withFileTypes: true, recursive: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  const parts: Buffer[] = [];
  for (const f of files.sort()) parts.push(Buffer.from(`${f.slice(dir.length)}\0`), await readFile(f));
  return Buffer.concat(parts);
}

/** Every file and folder under dir with its size and modification time, in path order. */
export function mtimes(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((p) => {
      const s = statSync(join(dir, p));
      return `${p} ${s.isDirectory() ? 'dir' : s.size} ${s.mtimeMs}`;
    })
    .concat(`. ${statSync(dir).mtimeMs}`);
}

/** Makes dir (recursively) writable or not: root is not stopped by permission bits, so for root it is made immutable (chattr +i). */
export function setWritable(dir: string, writable: boolean): void {
  if (process.getuid?.() === 0) execFileSync('chattr', ['-R', writable ? '-i' : '+i', dir]);
  else execFileSync('chmod', ['-R', writable ? 'u+w' : 'a-w', dir]);
}
