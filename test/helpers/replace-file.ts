import { rename, writeFile } from 'node:fs/promises';

/**
 * Replaces a file the server re-reads in one step (as a mounted ConfigMap's symlink swap does):
 * a reload check never reads it half written, which would count as a failed reload of its own.
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  await writeFile(`${file}.next`, text);
  await rename(`${file}.next`, file);
}
