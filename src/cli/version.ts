/**
 * orchd's version, as its package.json says it. The file is found by walking up from this module:
 * it sits two folders up from the sources (src/cli/), three from the compiled ones (dist/src/cli/),
 * two from the bundle (dist/package/), more from a test's build cache; and `orchd --version` must
 * not load anything else.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(from = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from), up = ''; dir !== up; up = dir, dir = dirname(dir)) {
    let text: string;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    const pkg = JSON.parse(text) as { name?: string; version?: string };
    if (pkg.name === 'orchd' && typeof pkg.version === 'string') return pkg.version;
  }
  throw new Error(`no package.json of orchd's above ${from}`);
}
