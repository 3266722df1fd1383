import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/*
 * The `orchd` command for the current sources. Node 20 cannot run TypeScript, so each file of src is
 * transpiled on its own (no type check: `npm test` does that, and another room's unfinished types
 * must not stop this test; a second or two instead of a full tsc build) into a cache folder named by
 * a hash of the sources, so a stale build is never run. The output goes to a temporary folder renamed
 * into place, so a concurrent run never sees half of one.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/orchd-config-test');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

export async function builtCli(): Promise<string> {
  const files = await sources(join(ROOT, 'src'));
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
  const h = createHash('sha256');
  files.forEach((f, i) => h.update(f.slice(ROOT.length)).update('\0').update(texts[i]).update('\0'));
  const dir = join(CACHE, h.digest('hex').slice(0, 16));
  const cli = join(dir, 'src/cli.js');
  if (
    await access(cli).then(
      () => true,
      () => false,
    )
  )
    return cli;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const compilerOptions: ts.CompilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false };
  await Promise.all(
    files.map(async (f, i) => {
      const out = join(tmp, f.slice(ROOT.length).replace(/\.ts$/, '.js'));
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, ts.transpileModule(texts[i], { compilerOptions, fileName: f }).outputText);
    }),
  );
  try {
    await rename(tmp, dir);
  } catch {
    // Another run put the same build in place first.
    await rm(tmp, { recursive: true, force: true });
  }
  return cli;
}
