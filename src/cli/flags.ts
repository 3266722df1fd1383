/**
 * The command line of every `orchd` command from one table per command: node:util parseArgs reads
 * the words, the table says what each flag is (its value's name, default, help and how its text
 * becomes a value), and the same table writes the command's usage text. A flag's value that does not
 * parse is a usage error naming the flag, said in one place (runCommand) with exit status 2.
 *
 *   const FLAGS = {
 *     port: { value: 'PORT', default: '8080', help: 'TCP port to listen on', parse: portNumber },
 *     keep: { help: 'keep serving after the end' },
 *   } as const satisfies Flags;
 *   // parseFlags(FLAGS, args).values: { port: number; keep: boolean }
 */
import { parseArgs } from 'node:util';

/** A flag without a value: true when given. */
export interface Switch {
  readonly help: string;
  readonly short?: string;
}

/** A flag with a value. */
export interface Option<T = unknown> {
  /** The value's name in the usage text (`RV|TIME`, `FILE`). */
  readonly value: string;
  readonly help: string;
  readonly short?: string;
  /** The text used when the flag is not given (parsed as given text is), shown in the usage. */
  readonly default?: string;
  /** Given more than once, every value is kept (in order). */
  readonly multiple?: boolean;
  /** The value from its text; a thrown Error's message becomes `--flag: message`, exit status 2. */
  readonly parse?: (text: string) => T;
}

export type Flag = Switch | Option;
export type Flags = Readonly<Record<string, Flag>>;

type ParsedOf<F> = F extends { parse: (text: string) => infer T } ? T : string;
/** What a flag reads as: a switch a boolean; an option its parsed value (undefined when neither given nor defaulted). */
export type FlagValue<F> = F extends { value: string } ? (F extends { multiple: true } ? ParsedOf<F>[] : F extends { default: string } ? ParsedOf<F> : ParsedOf<F> | undefined) : boolean;
export type Values<F extends Flags> = { -readonly [K in keyof F]: FlagValue<F[K]> };

/** A mistake in the command line: said on stderr with the command's name, exit status 2. */
export class UsageError extends Error {
  readonly refusal = 'usage';
}

/** A mistake the user can fix that is not in the command line's shape (a version not in the log, a missing file): one line, exit status 1. */
export class CommandError extends Error {
  readonly refusal = 'failed';
}

/**
 * How an error is a refusal to print in one line: by its `refusal` field, which the time-travel core's
 * errors (timetravel/core/errors.ts) carry too, so the rooms below need not import this one.
 */
const refusalOf = (err: unknown): 'usage' | 'failed' | undefined => {
  const r = (err as { refusal?: unknown } | null)?.refusal;
  return r === 'usage' || r === 'failed' ? r : undefined;
};

export interface Io {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

/** One `orchd` command: its flag table, its words, and what it does with them. */
export interface Command<F extends Flags = Flags> {
  name: string;
  /** One line, in `orchd --help`'s list of commands. */
  summary: string;
  /** The positional words after the name, as the usage line writes them (`RV1|TIME1 RV2|TIME2`). */
  words?: string;
  /** How many positional words it takes: [at least, at most]; default none. */
  positionals?: readonly [number, number];
  flags: F;
  /** Text after the flags in the usage (what a value means, examples). */
  notes?: string;
  run(parsed: { values: Values<F>; positionals: string[] }, io: Io): Promise<number>;
}

/** A command with its own flag table, stored beside others (the table's types stay inside it). */
export const command = <F extends Flags>(c: Command<F>): Command => c as unknown as Command;

const isOption = (f: Flag): f is Option => 'value' in f;

/** The words of a command line read by its table; 'help' when -h or --help is among them. */
export function parseFlags<F extends Flags>(flags: F, args: string[], positionals: readonly [number, number] = [0, 0]): { values: Values<F>; positionals: string[] } | 'help' {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, f] of Object.entries(flags))
    options[name] = { type: isOption(f) ? 'string' : 'boolean', ...(f.short ? { short: f.short } : {}), ...(isOption(f) && f.multiple ? { multiple: true } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: joinDashValues(args, options), options, strict: true, allowPositionals: positionals[1] > 0 });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (parsed.values.help) return 'help';
  const [min, max] = positionals;
  if (parsed.positionals.length > max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[max])}`);
  if (parsed.positionals.length < min) throw new UsageError(`missing argument${min - parsed.positionals.length > 1 ? 's' : ''}`);
  const values: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(flags)) {
    const given = parsed.values[name] as string | string[] | boolean | undefined;
    if (!isOption(f)) values[name] = given === true;
    else if (f.multiple) values[name] = ((given as string[] | undefined) ?? (f.default !== undefined ? [f.default] : [])).map((t) => valueOf(name, f, t));
    else {
      const text = (given as string | undefined) ?? f.default;
      values[name] = text === undefined ? undefined : valueOf(name, f, text);
    }
  }
  return { values: values as Values<F>, positionals: parsed.positionals };
}

/**
 * A flag that takes a value takes the next word even when it starts with a dash, as kubectl's flags
 * do (`--at -1` is the value -1, refused by --at's own parser in one line), where parseArgs would
 * answer with four lines about an ambiguous argument.
 */
function joinDashValues(args: string[], options: Record<string, { type: 'string' | 'boolean'; short?: string }>): string[] {
  const takesValue = new Set<string>();
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== 'string') continue;
    takesValue.add(`--${name}`);
    if (o.short) takesValue.add(`-${o.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (takesValue.has(a) && next !== undefined && next.startsWith('-') && next !== '--') {
      out.push(`${a}=${next}`.replace(/^-([^-])=/, '-$1'));
      i++;
    } else out.push(a);
  }
  return out;
}

function valueOf(name: string, f: Option, text: string): unknown {
  if (!f.parse) return text;
  try {
    return f.parse(text);
  } catch (err) {
    if (refusalOf(err)) throw err;
    throw new UsageError(`--${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const WIDTH = 100;

/** `-n, --namespace NS`: how the usage names a flag. */
const flagName = (name: string, f: Flag): string => `${f.short ? `-${f.short}, ` : '    '}--${name}${isOption(f) ? ` ${f.value}` : ''}`;

/** Words of text in lines of at most width, the first after `first`, the rest indented by `indent`. */
function wrap(text: string, first: string, indent: number, width = WIDTH): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.trim() !== '' && line.length + 1 + word.length > width && line.length > indent) {
      lines.push(line.trimEnd());
      line = ' '.repeat(indent);
    }
    line += (line.length === 0 || line.endsWith(' ') ? '' : ' ') + word;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

/** The flags of a table, one each: its name, then its help and default wrapped beside it. */
export function flagLines(flags: Flags): string {
  const names = Object.entries(flags).map(([name, f]) => [flagName(name, f), f] as const);
  const column = Math.min(36, Math.max(...names.map(([n]) => n.length)) + 4);
  return names
    .map(([n, f]) => {
      const help = isOption(f) && f.default !== undefined ? `${f.help} (default ${f.default})` : f.help;
      const first = `  ${n}`;
      return first.length + 2 > column ? `${first}\n${wrap(help, ' '.repeat(column), column)}` : wrap(help, first.padEnd(column), column);
    })
    .join('\n');
}

/** A command's usage: its line, its flags, its notes. */
export function usageOf(c: Command): string {
  const words = c.words ? ` ${c.words}` : '';
  const flags = `\n\nFlags:\n${flagLines({ ...c.flags, help: { short: 'h', help: 'print this and exit' } })}`;
  return `usage: orchd ${c.name}${words} [flags]\n\n${wrap(c.summary, '', 0)}${flags}\n${c.notes ? `\n${c.notes.trimEnd()}\n` : ''}`;
}

/**
 * Runs a command on its words: its exit status. --help prints its usage (0); a bad command line
 * is one line and a pointer to --help on stderr (2); a CommandError is one line (1); anything else
 * is a fault of orchd's and is thrown.
 */
export async function runCommand(c: Command, args: string[], io: Io): Promise<number> {
  try {
    const parsed = parseFlags(c.flags, args, c.positionals);
    if (parsed === 'help') {
      io.out.write(usageOf(c));
      return 0;
    }
    return await c.run(parsed, io);
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal === 'usage') {
      io.err.write(`orchd ${c.name}: ${(err as Error).message}\nRun 'orchd ${c.name} --help' for usage.\n`);
      return 2;
    }
    if (refusal === 'failed') {
      io.err.write(`orchd ${c.name}: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

/* Parsers shared by the commands' tables. Each throws an Error whose message follows `--flag: `. */

/** A whole number of at least min. */
export const wholeNumber =
  (min = 0) =>
  (text: string): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new Error(`must be a whole number of at least ${min}, not ${JSON.stringify(text)}`);
    return n;
  };

/** A TCP port: 0 (any free one) to 65535. */
export function portNumber(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`${JSON.stringify(text)} is not a port number (0-65535)`);
  return Number(text);
}

/** A value that must not be empty. */
export function nonEmpty(text: string): string {
  if (text === '') throw new Error('must not be empty');
  return text;
}

/** One of a few words. */
export const oneOf =
  <T extends string>(...words: T[]) =>
  (text: string): T => {
    if (!(words as string[]).includes(text)) throw new Error(`${JSON.stringify(text)} is not one of ${words.join(', ')}`);
    return text as T;
  };
