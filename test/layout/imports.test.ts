/**
 * The rooms of src/: each room imports only the rooms of its row in the rooms table, directly (a room
 * does not inherit what the rooms it imports may import: http reaches the store only through the
 * registry), and no file imports itself back through others. The table is written three times and
 * they are one table: ROOMS below, src/README.md's, and ../shared/design.md's (outside the
 * repository; compared wherever it is beside the checkout, as in CI).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const DESIGN = join(ROOT, '../shared/design.md');

/** A "may import" cell of "src rooms below the composition roots": every room whose own row is not "all". */
const BELOW_ROOTS = '<roots';

/** What each room may import directly: the "may import" column. Why a room imports a room, where it is not plain, is said in its row of the table. */
const ROOMS: Record<string, string[]> = {
  api: [],
  log: [],
  selectors: ['api'],
  cel: ['api'],
  resources: ['api', 'selectors', 'cel'],
  config: ['resources', 'log'],
  store: ['log', 'selectors', 'resources'],
  patch: ['resources'],
  egress: ['config'],
  admission: ['cel', 'resources', 'selectors', 'store', 'patch', 'egress', 'config'],
  auth: ['cel', 'selectors', 'store', 'egress', 'config'],
  registry: ['log', 'selectors', 'resources', 'store', 'patch', 'cel', 'admission', 'auth', 'config', 'egress', 'faults'],
  controllers: ['registry'],
  discovery: ['resources'],
  openapi: ['resources', 'discovery'],
  http: ['registry', 'auth', 'discovery', 'openapi', 'config', 'faults'],
  faults: ['api', 'config'],
  timetravel: [BELOW_ROOTS],
  observability: ['config'],
  serve: ['*'],
  embed: ['*'],
  cli: ['*'],
  index: ['*'],
};
/** The folders beside src/: what each may import besides itself ("src": any of src/). */
const FOLDERS: Record<string, string[]> = { bench: ['src'], tools: ['src'], test: ['src'] };

/**
 * Imports of test/ past its row, each with its reason: the bench's own tests, suites that use a
 * bench peer as a real counterpart (the local KMS plugin, the recording generator), and the ones that
 * build the shipped bundles with the build script. Short and reviewed: a new entry needs a reason here.
 */
const TEST_PAST_ROW = new Set([
  'test/embed/package.test.ts', // the package as npm ships it: built by tools/bundle-package.ts
  'test/server/child.ts',
  'test/timetravel/fork-serve.test.ts', // the example controller, run against a fork as a user runs it
  'test/bench/bench.test.ts', // the bench harness's own tests
  'test/bench/embed.test.ts',
  'test/bench/kubeconfig.test.ts',
  'test/encryption/kms.test.ts', // the local KMS v2 plugin (bench/peers) is the real gRPC peer
  'test/encryption/kms-replicas.test.ts',
  'test/encryption/reload.test.ts',
  'test/timetravel/export-replay.test.ts', // the example recording generator
  'test/watch/streaming-memory.test.ts', // the bench's watch client reads the stream as a client does
]);

/**
 * Files of src/ that only pass on what other modules export, each with its reason. Issue 38 removed
 * the ones that made a room a door by re-export (registry/kinds.ts, registry/stored.ts, …): a room
 * hands out what it owns. A new entry needs a reason here.
 */
const PASS_THROUGH: Record<string, string> = {
  'src/cel/index.ts': "the cel room's entry: its importers see one module, not its files",
  'src/timetravel/print/yaml-text.ts': "yaml's stringify through a module of ours: the bundle loads a CommonJS package imported lazily with a default export only",
};

/** Whether a file's every statement is an import or an export of names it does not define (and it exports something). */
function passesThroughOnly(file: string): boolean {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const statements = text
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
  const reexport = /^export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})(?:\s*from\s*['"][^'"]+['"])?$/;
  return statements.some((s) => reexport.test(s)) && statements.every((s) => /^import\b/.test(s) || reexport.test(s));
}

/** The rooms whose row reads the store and must not write it: "store (read only)". */
const READ_ONLY_STORE = ['admission', 'auth'];

/** Imported by every room: the API's shared vocabulary, and observability. */
const CROSS_CUTTING = new Set(['api', 'observability']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' || e.name.startsWith('.') ? [] : sources(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The files a file imports, static or dynamic, values or types, re-exports too (relative paths only). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/(?:^|[\s;])(?:import|export)\b[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]/g)];
  return found.map((m) => resolve(dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, '.ts'));
}

function roomOf(file: string, src = SRC): string {
  const parts = relative(src, file).split('/');
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, '');
}

/** Every import from one room of src/ to another that the importing room's row does not name. */
function strayImports(src: string, rooms: Record<string, string[]>): string[] {
  const found: string[] = [];
  for (const file of sources(src)) {
    const from = roomOf(file, src);
    const allowed = rooms[from] ?? [];
    for (const target of importsOf(file)) {
      const to = roomOf(target, src);
      const belowRoots = allowed.includes(BELOW_ROOTS) && rooms[to] !== undefined && !rooms[to].includes('*');
      if (to === from || CROSS_CUTTING.has(to) || allowed.includes('*') || allowed.includes(to) || belowRoots) continue;
      found.push(`${relative(src, file)} -> ${relative(src, target)}`);
    }
  }
  return found;
}

/** The import cycles among the files under root: each a set of files that import one another round (Tarjan's components). */
function importCycles(root: string, files = sources(root)): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const members: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      members.push(relative(root, w));
      if (w === v) break;
    }
    if (members.length > 1 || graph.get(v)!.includes(v)) cycles.push(members.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/**
 * The rooms table of a page: the rows naming folders or files of src/, each room with the rooms its
 * "may import" cell names. A note in parentheses after a room is a reason, except `(room: rooms)`,
 * which gives a room of the same row more ("resources (openapi: discovery)").
 */
function roomsTable(markdown: string): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !cells[1].startsWith('`src/')) continue;
    const rooms = [...cells[1].matchAll(/`src\/([\w-]+)(?:\/|\.ts)`/g)].map((m) => m[1]);
    const cell = cells[3];
    const extra = new Map<string, string[]>();
    const named: string[] = [];
    if (cell === 'all') named.push('*');
    else if (cell === 'src rooms below the composition roots') named.push(BELOW_ROOTS);
    else if (cell !== '—') {
      for (const item of splitTopLevel(cell)) {
        const m = /^([\w-]+)\s*(?:\((.*)\))?$/s.exec(item);
        if (!m) throw new Error(`rooms table: cannot read ${JSON.stringify(item)} in ${JSON.stringify(cells[1])}`);
        named.push(m[1]);
        const more = m[2] && /^([\w-]+):\s*(.*)$/.exec(m[2]);
        if (more && rooms.includes(more[1])) extra.set(more[1], more[2].split(/,\s*/));
      }
    }
    for (const room of rooms) table[room] = [...named, ...(extra.get(room) ?? [])];
  }
  return table;
}

/** The rows of a page's table for the folders beside src/ (`bench/` | … | src). */
function foldersTable(markdown: string): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const m = cells.length >= 4 && /^`(\w+)\/`$/.exec(cells[1]);
    if (m) table[m[1]] = splitTopLevel(cells[3]);
  }
  return table;
}

/** The rooms a table's rows mark "store (read only)". */
function readOnlyRooms(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('| `src/') && /\bstore \(read only\)/.test(l.split('|')[3] ?? ''))
    .flatMap((l) => [...l.split('|')[1].matchAll(/`src\/([\w-]+)\//g)].map((m) => m[1]));
}

/** Comma-separated items, commas inside parentheses left alone. */
function splitTopLevel(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      items.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  items.push(text.slice(start).trim());
  return items;
}

/** A table with its rooms and each row's rooms in order, for comparing two tables. */
const sorted = (t: Record<string, string[]>) =>
  Object.fromEntries(
    Object.keys(t)
      .sort()
      .map((k) => [k, [...t[k]].sort()]),
  );

describe('rooms', () => {
  it('every room of src/ is in the table', () => {
    const rooms = new Set(sources(SRC).map((f) => roomOf(f)));
    for (const r of rooms) expect(Object.keys(ROOMS), `room ${r}`).toContain(r);
  });

  it('each room imports only the rooms of its row, directly', () => {
    expect(strayImports(SRC, ROOMS)).toEqual([]);
  });

  it("is src/README.md's table", () => {
    expect(sorted(roomsTable(readFileSync(join(SRC, 'README.md'), 'utf8')))).toEqual(sorted(ROOMS));
  });

  // Not skipped when ../shared is missing: a checkout without the design beside it is not checked at all.
  it("is ../shared/design.md's table", () => {
    expect(existsSync(DESIGN), `${DESIGN} is beside the checkout (CI lays it there)`).toBe(true);
    expect(sorted(roomsTable(readFileSync(DESIGN, 'utf8')))).toEqual(sorted(ROOMS));
  });
});

describe('the folders beside src/', () => {
  const design = existsSync(DESIGN) ? readFileSync(DESIGN, 'utf8') : '';

  it("are ../shared/design.md's and src/README.md's rows", () => {
    expect(foldersTable(design)).toEqual(FOLDERS);
    expect(foldersTable(readFileSync(join(SRC, 'README.md'), 'utf8'))).toEqual(FOLDERS);
  });

  it('each imports only itself and the folders of its row', () => {
    const stray: string[] = [];
    for (const [folder, allowed] of Object.entries(FOLDERS)) {
      for (const file of sources(join(ROOT, folder))) {
        const rel = relative(ROOT, file);
        for (const target of importsOf(file)) {
          const to = relative(ROOT, target).split('/')[0];
          if (to === folder || allowed.includes(to)) continue;
          if (folder === 'test' && TEST_PAST_ROW.has(rel)) continue;
          stray.push(`${rel} -> ${relative(ROOT, target)}`);
        }
      }
    }
    // and src/ imports none of them
    for (const file of sources(SRC)) for (const target of importsOf(file)) if (!target.startsWith(SRC)) stray.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
    expect(stray).toEqual([]);
  });
});

describe('store (read only)', () => {
  it("names design.md's rooms", () => {
    expect(readOnlyRooms(readFileSync(DESIGN, 'utf8')).sort()).toEqual([...READ_ONLY_STORE].sort());
  });

  // The store's writes are methods of Store; a read-only room is given StoreReads (the reads and the committed changes), so a write there does not type-check.
  it('those rooms name StoreReads, never the Store with its writes', () => {
    const found = READ_ONLY_STORE.flatMap((room) =>
      sources(join(SRC, room))
        .filter((f) => /import\s+(?:type\s+)?\{[^}]*\bStore\b[^}]*\}\s*from\s*['"][./]*store\/store\.js['"]/.test(readFileSync(f, 'utf8')))
        .map((f) => relative(SRC, f)),
    );
    expect(found).toEqual([]);
  });
});

describe('pass-through files', () => {
  it('no file of src/ only passes on what others export, but those listed, and each listed one still does', () => {
    const found = sources(SRC)
      .filter(passesThroughOnly)
      .map((f) => relative(ROOT, f));
    expect(found.filter((f) => !Object.hasOwn(PASS_THROUGH, f))).toEqual([]);
    expect(Object.keys(PASS_THROUGH).filter((f) => !found.includes(f))).toEqual([]);
  });
});

describe('import cycles', () => {
  const cycles = importCycles(
    ROOT,
    ['src', 'tools', 'bench', 'test'].flatMap((d) => sources(join(ROOT, d))),
  );

  it('no file of src/, tools/, bench/ or test/ imports itself back through others', () => {
    expect(cycles).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const tree = (files: Record<string, string>) => {
    const dir = tempDir('orchd-layout-');
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };

  it('find an import past the row (no closure), and a cycle through a type-only import', () => {
    const dir = tree({
      'a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'b/y.ts': "import type { Z } from '../c/z.js';\nexport const y: Z = 1;\n",
      'c/z.ts': "import type { x } from '../a/x.js';\nexport type Z = typeof x;\n",
    });
    // a may import b, b may import c: a still may not import c itself (it does not), nor c a.
    expect(strayImports(dir, { a: ['b'], b: ['c'], c: [] })).toEqual(['c/z.ts -> a/x.ts']);
    expect(importCycles(dir)).toEqual([['a/x.ts', 'b/y.ts', 'c/z.ts']]);
  });

  it('find a file that only re-exports, and pass one that also declares', () => {
    const dir = tree({
      'a/only.ts': "/** A door by re-export. */\nimport type { Y } from '../b/y.js';\nexport { y } from '../b/y.js';\nexport type { Y };\n",
      'a/own.ts': "import { y } from '../b/y.js';\nexport { z } from '../b/z.js';\nexport const x = y + 1;\n",
    });
    expect(passesThroughOnly(join(dir, 'a/only.ts'))).toBe(true);
    expect(passesThroughOnly(join(dir, 'a/own.ts'))).toBe(false);
  });

  it('read a rooms table with reasons, shared rows and a room of a row with more', () => {
    const md = [
      '| folder | holds | may import |',
      '|---|---|---|',
      '| `src/log/` | the log | — |',
      '| `src/config/` | files | resources (field errors, names), log |',
      '| `src/discovery/`, `src/openapi/` | documents | resources (openapi: discovery) |',
      '| `src/serve.ts`, `src/cli.ts` | roots | all |',
      '| `bench/` | harness | src |',
    ].join('\n');
    expect(roomsTable(md)).toEqual({ log: [], config: ['resources', 'log'], discovery: ['resources'], openapi: ['resources', 'discovery'], serve: ['*'], cli: ['*'] });
  });
});
