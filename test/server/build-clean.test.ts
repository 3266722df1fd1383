/**
 * `npm run build` starts from an empty dist/: files an earlier build left (of sources since removed
 * or renamed, whose maps carry no sources) must not reach `npm pack`. npm runs the manifest's
 * prebuild before every build (npm start and prepack build too); run here on a copy of the manifest.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

it('removes whatever dist/ held before the build', async () => {
  const checkout = tempDir('orchd-build-clean-');
  await copyFile(join(ROOT, 'package.json'), join(checkout, 'package.json'));
  await mkdir(join(checkout, 'dist', 'src', 'gone'), { recursive: true });
  await writeFile(join(checkout, 'dist', 'src', 'gone', 'old.js'), '');
  await writeFile(join(checkout, 'dist', 'src', 'gone', 'old.js.map'), '{"version":3,"sources":["../../../src/gone/old.ts"],"mappings":""}');
  await writeFile(join(checkout, 'keep.txt'), '');
  await promisify(execFile)('npm', ['run', 'prebuild', '--silent'], { cwd: checkout, timeout: 60_000 });
  expect((await readdir(checkout)).sort()).toEqual(['keep.txt', 'package.json']);
});
