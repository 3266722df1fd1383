/**
 * A command starts fast (issue 40): the `orchd` command as installed (the bundle `npm run build`
 * makes) loads only what the command it runs needs. A loader hook records every file Node loads;
 * the bundle's chunks name the modules they hold in `// path` comments, so what a command loaded
 * is read from them. Times are bench rows (bench/RESULTS.md), not asserted here: the machine is shared.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { tempDir } from '../helpers/temp.js';
import { builtPackage } from '../server/child.js';

const HOOK = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.ORCHD_LOADED, url + '\\n');
  return next(url, context);
}`;

let cli: string;
let dir: string;

beforeAll(async () => {
  cli = join(await builtPackage(), 'cli.js');
  dir = tempDir('orchd-start-');
  await writeFile(join(dir, 'hook.mjs'), HOOK);
  await writeFile(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${join(dir, 'hook.mjs')}`)});\n`);
}, 300_000);

/** Runs the built `orchd` with args: its output and the modules its files hold (their `// path` comments). */
async function loaded(...args: string[]): Promise<{ out: string; modules: string[] }> {
  const list = join(dir, `loaded-${args.join('-').replace(/[^\w.-]+/g, '_')}.txt`);
  await writeFile(list, '');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', join(dir, 'register.mjs'), cli, ...args], { env: { ...process.env, ORCHD_LOADED: list }, timeout: 60_000 });
  const files = (await readFile(list, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((u) => new URL(u).pathname);
  const modules: string[] = [];
  for (const f of files) for (const m of (await readFile(f, 'utf8')).matchAll(/^\/\/ (\S+\.[cm]?js)$/gm)) modules.push(m[1]);
  return { out: stdout, modules };
}

const heavy = (modules: string[], pattern: RegExp) => modules.filter((m) => pattern.test(m));

describe('orchd loads only what the command it runs needs', () => {
  it('--version and --help load no command, nor anything of the server or the tools', async () => {
    const version = await loaded('--version');
    expect(version.out).toMatch(/^orchd \d+\.\d+\.\d+\S*\n$/);
    const help = await loaded('--help');
    expect(help.out).toContain('  history ');
    for (const { modules } of [version, help]) {
      expect(heavy(modules, /\/src\/(cli\/(?!orchd|flags|version)|timetravel|resources|log|store|http)\/|node_modules\/(?!\.cache\/)/)).toEqual([]);
    }
  });

  it('history --help loads its flag table, not the log codec, the kinds, CEL or the progress bar', async () => {
    const { out, modules } = await loaded('history', '--help');
    expect(out).toMatch(/^usage: orchd history RESOURCE\/NAME/);
    expect(modules).toEqual(expect.arrayContaining([expect.stringMatching(/\/src\/cli\/history\.js$/)]));
    expect(heavy(modules, /\/src\/(resources|log|store|selectors)\/|\/src\/timetravel\/(sources|print)\/|node_modules\/(msgpackr|@marcbachmann|cli-progress|fast-json-patch|yaml)\//)).toEqual([]);
  });

  it('history of a built-in kind from a data folder loads no kind, CEL, progress bar, all of rxjs nor msgpackr-extract', async () => {
    const dataDir = join(dir, 'data');
    const log = new LevelDbLog({ path: join(dataDir, 'log') });
    await log.open();
    const key = 'events.orch.io/events/default/e1';
    for (const step of ['1', '2']) {
      const object = { apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default', labels: { step } } };
      await log.append({ type: 'put', key, value: object }).durable;
    }
    await log.close();
    const { out, modules } = await loaded('history', '--data-dir', dataDir, 'events/e1', '-n', 'default', '-o', 'json-patch');
    expect(out.trim().split('\n')).toHaveLength(2);
    expect(modules).toEqual(expect.arrayContaining([expect.stringMatching(/\/src\/timetravel\/sources\/data-dir\.js$/)]));
    // The one rxjs module every log needs (a Subject), from its ES build: not the whole CommonJS build.
    expect(heavy(modules, /\/src\/(resources\/(?!built-in-names)|cel\/)|node_modules\/(@marcbachmann|cli-progress|msgpackr-extract|detect-libc|rxjs\/dist\/cjs)\//)).toEqual([]);
  });
});
