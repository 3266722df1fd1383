/**
 * The package as a consumer sees it: `import { startOrchd } from 'orchd'` resolved through the
 * `exports` of package.json to the bundled JavaScript and the declarations. src is compiled with
 * declarations and bundled (as `npm run build` does, test/server/child.ts) for the current sources; a
 * consumer project gets it as npm would install it (node_modules/orchd with package.json and the
 * build, its dependencies beside it), type-checks a file against its declarations and runs one;
 * another project without client-node runs too.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { builtPackage } from '../server/child.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

let home: string;
/** A project with orchd and @kubernetes/client-node installed; one with orchd alone. */
let consumer: string;
let bare: string;

/**
 * A project as npm lays one out: node_modules/orchd holds package.json and the build, and every
 * dependency sits beside it (links to this repository's node_modules) — client-node only when asked.
 */
async function project(name: string, dist: string, withClientNode: boolean): Promise<string> {
  const dir = join(home, name);
  const modules = join(dir, 'node_modules');
  await mkdir(join(modules, 'orchd'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(modules, 'orchd/package.json'));
  await cp(dist, join(modules, 'orchd/dist'), { recursive: true });
  for (const entry of await readdir(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('.') || (entry === '@kubernetes' && !withClientNode)) continue;
    await symlink(join(ROOT, 'node_modules', entry), join(modules, entry));
  }
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', private: true }));
  return dir;
}

beforeAll(async () => {
  // dist as `npm run build` makes it (src with declarations, then its bundles in dist/package), for
  // the current sources: the build the child servers of the other tests run.
  const dist = dirname(await builtPackage());
  home = tempDir('orchd-package-');
  consumer = await project('consumer', dist, true);
  bare = await project('bare', dist, false);
}, 240_000);

afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe("import { startOrchd } from 'orchd'", () => {
  it('type-checks against the declarations the exports name (typed, not any)', async () => {
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['check.ts'] }),
    );
    await writeFile(
      join(consumer, 'check.ts'),
      [
        "import { OrchdExpiredError, startOrchd, type Orchd, type OrchdObject, type HistoryEntry } from 'orchd';",
        "import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';",
        "const api: Orchd = await startOrchd({ storage: 'memory', port: 0 });",
        'const port: number = api.port;',
        'const server: string | undefined = api.kubeConfig().getCurrentCluster()?.server;',
        "const yaml: string = api.kubeconfigYaml({ token: 't' });",
        "const versions: HistoryEntry<OrchdObject>[] = await api.history('events', 'default', 'e');",
        '// The objects it gives are client-node objects, and the caller may name their type.',
        'const asClientNode: KubernetesObject[] = (await api.state()).concat(versions.map((v) => v.object));',
        'const fromClientNode: OrchdObject[] = asClientNode;',
        'const namespaces: V1Namespace[] = await api.state<V1Namespace>();',
        "const typed: HistoryEntry<V1Namespace>[] = await api.history<V1Namespace>('namespaces', undefined, 'default');",
        'const expired: { code: 410; reason: string } = new OrchdExpiredError("gone", "7");',
        'const open: number = await api.watchers({ atLeast: 0 });',
        '// @ts-expect-error the YAML one is kubeconfigYaml()',
        'api.kubeconfig();',
        '// @ts-expect-error storage is memory or leveldb',
        "await startOrchd({ storage: 'disk' });",
        '// @ts-expect-error reset takes nothing and resolves to nothing',
        'const n: number = await api.reset(1);',
        'export { port, server, yaml, versions, fromClientNode, namespaces, typed, expired, open, n };',
      ].join('\n'),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(consumer, 'tsconfig.json')], { cwd: consumer, timeout: 120_000 }).then(
      () => ({ code: 0, out: '' }),
      (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
    );
    expect(result.out).toBe('');
    expect(result.code).toBe(0);
  });

  it('runs: starts orchd in the consumer process, answers a list through the KubeConfig it gives, stops', async () => {
    await writeFile(
      join(consumer, 'main.mjs'),
      [
        "import { startOrchd } from 'orchd';",
        "import { CoreV1Api } from '@kubernetes/client-node';",
        'const api = await startOrchd();',
        'const list = await api.kubeConfig().makeApiClient(CoreV1Api).listNamespace();',
        'await api.stop();',
        'console.log(JSON.stringify({ url: api.url, namespaces: list.items.map((n) => n.metadata.name) }));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: consumer, timeout: 60_000 });
    const out = JSON.parse(stdout);
    expect(out.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(out.namespaces).toEqual(expect.arrayContaining(['default', 'kube-system']));
  });

  it('works without client-node installed; only kubeConfig() asks for it', async () => {
    await writeFile(
      join(bare, 'main.mjs'),
      [
        "import { startOrchd } from 'orchd';",
        'const api = await startOrchd();',
        "const list = await (await fetch(api.url + '/api/v1/namespaces')).json();",
        'let error;',
        'try { api.kubeConfig(); } catch (err) { error = err.message; }',
        'await api.stop();',
        'console.log(JSON.stringify({ namespaces: list.items.map((n) => n.metadata.name), kubeconfig: api.kubeconfigYaml().includes(api.url), error }));',
      ].join('\n'),
    );
    const out = JSON.parse((await run(process.execPath, ['main.mjs'], { cwd: bare, timeout: 60_000 })).stdout);
    expect(out.namespaces).toEqual(expect.arrayContaining(['default']));
    expect(out.kubeconfig).toBe(true);
    expect(out.error).toMatch(/^kubeConfig\(\) needs @kubernetes\/client-node 1\.x installed beside orchd .*; it is not installed, under Node /);
  });
});

describe('the README', () => {
  it('its example runs as written: type-checked against the package, then run by vitest in the consumer', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const m = /<!-- readme-example: (\S+) -->\n```ts\n([\s\S]*?)\n```/.exec(readme);
    expect(m, 'the README marks its example').not.toBeNull();
    const [, file, code] = m!;
    await writeFile(join(consumer, file!), code!);
    await writeFile(
      join(consumer, 'tsconfig.readme.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: [file] }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.readme.json'], { cwd: consumer, timeout: 120_000 }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    expect(checked).toBe('');
    const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
    const ran = await run(process.execPath, [vitest, 'run', file!, '--root', consumer, '--reporter', 'json'], { cwd: consumer, timeout: 120_000, maxBuffer: 16 << 20 }).then(
      (r) => r.stdout,
      (err: { stdout: string; stderr: string }) => `${err.stdout}\n${err.stderr}`,
    );
    const report = JSON.parse(ran.slice(ran.indexOf('{')));
    const tests = report.testResults.flatMap((f: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }) => f.assertionResults);
    expect(tests.map((t: { title: string; status: string; failureMessages: string[] }) => [t.title, t.status, t.failureMessages.join('\n').slice(0, 500)])).toEqual([
      ['marks a new Widget ready', 'passed', ''],
      ['refuses what the schema refuses, with the field', 'passed', ''],
    ]);
  });
});

describe('what npm publishes', () => {
  it('runs no script on install that needs files it does not ship (prepare, install and the like)', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[hook], hook).toBeUndefined();
    expect(manifest.files).not.toContain('src');
  });

  it('ships source maps that carry their sources (src is not in the package)', async () => {
    const dist = dirname(await builtPackage());
    const maps = (await readdirDeep(join(dist, 'src'))).filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    for (const f of maps.slice(0, 400)) {
      const map = JSON.parse(await readFile(f, 'utf8'));
      expect(map.sourcesContent?.[0], f).toEqual(expect.any(String));
    }
  });
});

async function readdirDeep(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await readdirDeep(p)));
    else out.push(p);
  }
  return out;
}
