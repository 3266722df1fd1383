import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { command, flagLines, oneOf, parseFlags, portNumber, runCommand, UsageError, usageOf, wholeNumber, type Flags } from '../../src/cli/flags.js';
import { COMMANDS, runOrchd } from '../../src/cli/orchd.js';
import { sink } from '../timetravel/helpers.js';

/*
 * One flag table per command: it reads the command line into typed values and writes the usage.
 * Each rule of the table has a row here; every real command's usage is checked against its table.
 */

const FLAGS = {
  port: { value: 'PORT', default: '8080', help: 'port', parse: portNumber },
  name: { value: 'NAME', short: 'n', help: 'a name' },
  kind: { value: 'KIND', multiple: true, help: 'kinds' },
  output: { value: 'FORMAT', short: 'o', default: 'table', help: 'format', parse: oneOf('table', 'json') },
  from: { value: 'RV', help: 'first', parse: wholeNumber(1) },
  follow: { help: 'go on' },
} as const satisfies Flags;

describe('parseFlags', () => {
  it('reads each flag as its table says: parsed, defaulted, repeated, switched', () => {
    const parsed = parseFlags(FLAGS, ['-n', 'x', '--kind', 'a', '--kind', 'b', '--from', '7', '--follow', '-o', 'json']);
    expect(parsed).toEqual({ values: { port: 8080, name: 'x', kind: ['a', 'b'], output: 'json', from: 7, follow: true }, positionals: [] });
    expect(parseFlags(FLAGS, [])).toEqual({ values: { port: 8080, name: undefined, kind: [], output: 'table', from: undefined, follow: false }, positionals: [] });
  });

  it.each([
    ['an unknown flag', ['--nope'], /Unknown option '--nope'/],
    ['a value that does not parse, named by its flag', ['--port', 'http'], /^--port: "http" is not a port number \(0-65535\)$/],
    ['a word not in the list', ['-o', 'xml'], /^--output: "xml" is not one of table, json$/],
    ['a number below the least', ['--from', '0'], /^--from: must be a whole number of at least 1, not "0"$/],
    ['a flag without its value', ['--name'], /argument missing/],
    ['a word where none is taken', ['extra'], /Unexpected argument 'extra'/],
  ])('%s is a usage error', (_name, args, message) => {
    expect(() => parseFlags(FLAGS, args)).toThrow(UsageError);
    expect(() => parseFlags(FLAGS, args)).toThrow(message);
  });

  it('counts positional words', () => {
    expect(parseFlags(FLAGS, ['a', 'b'], [2, 2])).toMatchObject({ positionals: ['a', 'b'] });
    expect(() => parseFlags(FLAGS, ['a'], [2, 2])).toThrow('missing argument');
    expect(() => parseFlags(FLAGS, ['a', 'b', 'c'], [2, 2])).toThrow('unexpected argument "c"');
  });

  it('-h and --help ask for the usage, whatever else is given', () => {
    expect(parseFlags(FLAGS, ['--port', 'x', '-h'])).toBe('help');
    expect(parseFlags(FLAGS, ['--help'])).toBe('help');
  });
});

describe('usage from the table', () => {
  const demo = command({ name: 'demo', summary: 'Does a thing.', words: 'THING', positionals: [1, 1], flags: FLAGS, notes: 'More.', run: async () => 0 });

  it('names every flag with its value, short form, help and default', () => {
    const text = usageOf(demo);
    expect(text.startsWith('usage: orchd demo THING [flags]\n\nDoes a thing.\n\nFlags:\n')).toBe(true);
    expect(text).toMatch(/^ {6}--port PORT +port \(default 8080\)$/m);
    expect(text).toMatch(/^ {2}-n, --name NAME +a name$/m);
    expect(text).toMatch(/^ {2}-o, --output FORMAT +format \(default table\)$/m);
    expect(text).toMatch(/^ {6}--follow +go on$/m);
    expect(text).toMatch(/^ {2}-h, --help +print this and exit$/m);
    expect(text.endsWith('\nMore.\n')).toBe(true);
  });

  it('wraps a long help under its flag, no line past 100 columns', () => {
    const long = flagLines({ x: { value: 'V', help: 'word '.repeat(60).trim() } });
    expect(long.split('\n').length).toBeGreaterThan(2);
    expect(long.split('\n').every((l) => l.length <= 100)).toBe(true);
  });

  it('runCommand: --help on stdout (0), a usage error in two lines on stderr (2), a command error in one (1)', async () => {
    const out = sink();
    const err = sink();
    expect(await runCommand(demo, ['--help'], { out, err })).toBe(0);
    expect(out.text).toBe(usageOf(demo));
    expect(await runCommand(demo, ['--port', 'x', 'a'], { out: sink(), err })).toBe(2);
    expect(err.text).toBe(`orchd demo: --port: "x" is not a port number (0-65535)\nRun 'orchd demo --help' for usage.\n`);
  });
});

describe('every orchd command', () => {
  it.each(Object.keys(COMMANDS))('%s --help describes every flag of its table', async (name) => {
    const c = await COMMANDS[name].load();
    const out = sink();
    expect(await runOrchd([name, '--help'], { out, err: sink() })).toBe(0);
    expect(out.text.startsWith(`usage: orchd ${name}`)).toBe(true);
    for (const [flag, f] of Object.entries(c.flags)) {
      expect(f.help.length, `--${flag}`).toBeGreaterThan(5);
      expect(out.text, `--${flag}`).toContain(`--${flag}`);
    }
  });

  it("orchd --help lists every command with its own summary, one line each, and no command's flags", async () => {
    const out = sink();
    expect(await runOrchd(['--help'], { out, err: sink() })).toBe(0);
    const listed = out.text
      .split('\n\n')
      .find((p) => p.startsWith('Commands:\n'))!
      .split('\n')
      .slice(1);
    expect(listed.map((l) => l.trim().split(/\s+/)[0])).toEqual(Object.keys(COMMANDS));
    for (const [name, entry] of Object.entries(COMMANDS)) {
      // The table's line is the command's own, as its --help says it.
      expect(entry.summary).toBe((await entry.load()).summary);
      expect(out.text).toMatch(new RegExp(`^ {2}${name} +${entry.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    }
    expect(out.text).not.toMatch(/--data-dir|--port/);
    expect(out.text).toMatch(/^ +--version +print orchd's version and exit$/m);
  });

  it("orchd --version prints the package's version", async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const word of ['--version', 'version']) {
      const out = sink();
      expect(await runOrchd([word], { out, err: sink() })).toBe(0);
      expect(out.text).toBe(`orchd ${version}\n`);
    }
  });
});
