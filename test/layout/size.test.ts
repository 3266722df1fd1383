/**
 * The style rule of ../shared/style.md: files of src/ and tools/ at most 400 lines, functions of src/ at
 * most 80, but for the few in LONG_FUNCTIONS below, each with its reason. A comment in the code does
 * not exempt a function: the list is here, short, and reviewed with this file.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/**
 * The functions of src/ allowed past MAX_FUNCTION_LINES, by file and name, each with why. Shrink it:
 * the closures among them are state that wants a named object (issue 38).
 */
const LONG_FUNCTIONS: Record<string, string> = {
  'src/http/codec/json-decode.ts decodeJson': 'the cursor and the duplicate list are locals of one hand-written scanner',
};

/** Files of src/ at most this long, functions too. */
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

/** Functions of a file longer than the limit, but those allowed (by `file name`). */
function longFunctions(file: string, allowed: Record<string, string> = LONG_FUNCTIONS): string[] {
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
    const id = `${relative(ROOT, file)} ${name}`;
    if (!Object.hasOwn(allowed, id)) found.push(id);
  });
  return found;
}

describe('size', () => {
  it(`no file of src/ or tools/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = [...sources(SRC), ...sources(join(ROOT, 'tools'))].filter((f) => readFileSync(f, 'utf8').split('\n').length > MAX_FILE_LINES);
    expect(long.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it(`no function of src/ is over ${MAX_FUNCTION_LINES} lines but those listed, and each listed one still is`, () => {
    const found = sources(SRC).flatMap((f) => longFunctions(f));
    expect(found).toEqual([]);
    // An entry whose function got short (or went) leaves the list.
    const stillLong = new Set(sources(SRC).flatMap((f) => longFunctions(f, {})));
    expect(Object.keys(LONG_FUNCTIONS).filter((id) => !stillLong.has(id))).toEqual([]);
  });

  it('the scan finds a long function, whatever its comment says, and passes one on the list', () => {
    const dir = tempDir('orchd-size-');
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const a${i} = '{';`).join('\n');
    writeFileSync(join(dir, 'said.ts'), `/** Long: a table written out. */\nexport const said = (): void => {\n${body}\n};\n`);
    expect(longFunctions(join(dir, 'said.ts'))).toHaveLength(1);
    expect(longFunctions(join(dir, 'said.ts'), { [`${relative(ROOT, join(dir, 'said.ts'))} said`]: 'a table' })).toEqual([]);
  });
});
