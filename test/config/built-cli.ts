import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/*
 * The compiled `orchd` command for the current sources. Node 20 cannot run TypeScript, so src/cli.ts
 * and what it imports are compiled (emit only: another room's unfinished types must not stop this
 * test) into a cache folder named by a hash of the sources, so a stale build is never run. The build
 * goes to a temporary folder renamed into place, so a concurrent run never sees half of one.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/orchd-config-test');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

export async function builtCli(): Promise<string> {
  const h = createHash('sha256');
  for (const f of await sources(join(ROOT, 'src'))) h.update(f.slice(ROOT.length)).update('\0').update(await readFile(f)).update('\0');
  const dir = join(CACHE, h.digest('hex').slice(0, 16));
  const cli = join(dir, 'src/cli.js');
  if (await access(cli).then(() => true, () => false)) return cli;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const options = ['--outDir', tmp, '--rootDir', ROOT, '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--skipLibCheck', '--noCheck', '--types', 'node'];
  await promisify(execFile)(process.execPath, [tsc, join(ROOT, 'src/cli.ts'), ...options], { cwd: ROOT, timeout: 120_000 });
  try {
    await rename(tmp, dir);
  } catch {
    // Another run put the same build in place first.
    await rm(tmp, { recursive: true, force: true });
  }
  return cli;
}
