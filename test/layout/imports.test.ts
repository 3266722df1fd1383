/**
 * The rooms of ../shared/design.md: every import between two folders of src/ points down the rooms
 * table. A new import that points up fails here with the file that made it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

/**
 * What each room may import directly (the "may import" column, with what those rooms may import in
 * turn). Where this differs from design.md the reason is beside it.
 */
const DIRECT: Record<string, string[]> = {
  log: [],
  selectors: [],
  // The admission kinds' variables may only name variables declared before them: resources reads
  // the references with the CEL room's lexer (cel/variable-references.ts). cel imports nothing, so
  // it sits below resources and this adds no cycle (design.md: cel above resources in the table).
  resources: ['selectors', 'cel'],
  store: ['log', 'selectors', 'resources'],
  patch: ['resources'],
  cel: [],
  // Configuration files are validated with the kinds' field errors and name formats, into the shapes
  // the rooms they configure declare (encryption at rest: log).
  config: ['resources', 'log'],
  // Outbound connections are dialed as the egress selector configuration says.
  egress: ['config'],
  // Webhooks are dialed through egress with the admission configuration's credentials; apply
  // mutations reuse the patch room's merge.
  admission: ['cel', 'resources', 'selectors', 'store', 'patch', 'egress', 'config'],
  auth: ['cel', 'selectors', 'store', 'egress', 'config'],
  registry: ['log', 'selectors', 'resources', 'store', 'patch', 'cel', 'admission', 'auth', 'config', 'egress'],
  controllers: ['registry'],
  discovery: ['resources'],
  openapi: ['resources', 'discovery'],
  http: ['registry', 'auth', 'discovery', 'openapi'],
  // The logger, metrics and spans are used by every room; they import only the tracing configuration.
  observability: ['config'],
  serve: ['*'],
  cli: ['*'],
  // startOrchd: orchd inside a process, a composition like serve.ts; index.ts is the package entry.
  embed: ['*'],
  index: ['*'],
};
/** Imported by every room. */
const CROSS_CUTTING = new Set(['observability']);

/** Imports that point up today and are being removed (issue 14); the list only shrinks. */
const PENDING = new Set<string>([
]);

function closure(room: string, seen = new Set<string>()): Set<string> {
  for (const r of DIRECT[room] ?? []) {
    if (seen.has(r)) continue;
    seen.add(r);
    closure(r, seen);
  }
  return seen;
}

function roomOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, '');
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function upwardImports(): string[] {
  const found: string[] = [];
  for (const file of sources(SRC)) {
    const from = roomOf(file);
    const allowed = closure(from);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = roomOf(resolve(dirname(file), m[1]));
      if (to === from || CROSS_CUTTING.has(to) || allowed.has('*') || allowed.has(to)) continue;
      found.push(`${relative(ROOT, file)} -> ${relative(ROOT, resolve(dirname(file), m[1]))}`);
    }
  }
  return found;
}

describe('rooms', () => {
  it('every room of src/ is in the table', () => {
    const rooms = new Set(sources(SRC).map(roomOf));
    for (const r of rooms) expect(Object.keys(DIRECT), `room ${r}`).toContain(r);
  });

  it('no import points up the rooms table', () => {
    const up = upwardImports();
    expect(up.filter((e) => !PENDING.has(e))).toEqual([]);
    // A pending exception that no longer exists is removed from the list.
    expect([...PENDING].filter((e) => !up.includes(e))).toEqual([]);
  });
});

/** The style rule of ../shared/style.md: files of src/ at most this long, functions too unless a comment says why. */
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

const FUNCTION_START = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+(\w+)/,
  /^\s*(?:export\s+)?(?:const|let)\s+(\w+)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*(?::[^=]+)?=>\s*\{\s*$/,
  /^\s*(?:(?:public|private|protected|static|async|get|set)\s+)*(\w+)\s*\([^;]*\)\s*(?::\s*[^{;]+)?\{\s*$/,
];
const NOT_A_FUNCTION = /^\s*(?:if|for|while|switch|catch|return|else)\b/;
/** A line without its strings and trailing comment, for counting braces. */
const code = (line: string): string => line.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`[^`]*`|\/\/.*$/g, '');

/** Functions of a file longer than the limit whose leading comment does not say why ("long"). */
function longFunctions(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const found: string[] = [];
  lines.forEach((line, start) => {
    const name = NOT_A_FUNCTION.test(line) ? undefined : FUNCTION_START.map((re) => re.exec(line)?.[1]).find((n) => n !== undefined);
    if (name === undefined) return;
    let depth = 0;
    let end = start;
    for (let opened = false; end < lines.length; end++) {
      const c = code(lines[end]);
      depth += (c.match(/\{/g)?.length ?? 0) - (c.match(/\}/g)?.length ?? 0);
      opened ||= c.includes('{');
      if (opened && depth <= 0) break;
    }
    if (end - start + 1 <= MAX_FUNCTION_LINES) return;
    let above = start - 1;
    while (above >= 0 && /^\s*(?:\/\*\*|\*|\/\/)/.test(lines[above])) above--;
    const comment = lines.slice(above + 1, start).join('\n');
    if (!/\blong\b/i.test(comment)) found.push(`${relative(ROOT, file)} ${name}`);
  });
  return found;
}

describe('size', () => {
  it(`no file of src/ or tools/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = [...sources(SRC), ...sources(join(ROOT, 'tools'))].filter((f) => readFileSync(f, 'utf8').split('\n').length > MAX_FILE_LINES);
    expect(long.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it(`no function of src/ is over ${MAX_FUNCTION_LINES} lines without a comment saying why it is long`, () => {
    const found = sources(SRC).flatMap(longFunctions);
    expect(found).toEqual([]);
  });

  it('the scan finds a long function without its reason, and accepts one with it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orchd-size-'));
    try {
      const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const a${i} = '{';`).join('\n');
      writeFileSync(join(dir, 'bare.ts'), `/** Adds. */\nexport function bare(): void {\n${body}\n}\n`);
      writeFileSync(join(dir, 'said.ts'), `/** Long: a table written out. */\nexport const said = (): void => {\n${body}\n};\n`);
      expect(longFunctions(join(dir, 'bare.ts'))).toHaveLength(1);
      expect(longFunctions(join(dir, 'said.ts'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
