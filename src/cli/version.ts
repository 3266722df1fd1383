/**
 * orchd's version, as its package.json says it. The file is found by walking up from this module:
 * it sits two folders up from the sources (src/cli/), three from the compiled ones (dist/src/cli/)
 * and two from the bundle (dist/package/), and `orchd --version` must not load anything else.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_UP = 5;

export function packageVersion(from = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (let i = 0; i < MAX_UP; i++, dir = dirname(dir)) {
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
