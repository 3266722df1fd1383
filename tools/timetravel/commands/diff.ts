/** `orchd diff RV1 RV2`: what changed between two versions, object by object, as a unified YAML diff or JSON patches. */
import { command, oneOf, UsageError, type Flags } from '../../../src/cli/flags.js';
import { collectionOfKind, parseVersionSpec, resolveVersion, stateInPages, type Filter, type History, type Stored } from '../history.js';
import { jsonPatch, labelOf } from '../output.js';
import { FILTERS, filterOf, SOURCE, TIME_NOTE, withHistory } from '../source.js';
import { writeAll } from '../write-out.js';

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  output: { value: 'FORMAT', short: 'o', default: 'diff', help: 'diff (unified YAML, coloured on a terminal) or json-patch (one object per line)', parse: oneOf('diff', 'json-patch') },
} as const satisfies Flags;

export const diffCommand = command({
  name: 'diff',
  summary: 'What changed between two versions (or times), object by object.',
  words: 'RV1|TIME1 RV2|TIME2',
  positionals: [2, 2],
  flags: FLAGS,
  notes: TIME_NOTE,
  async run({ values, positionals }, io) {
    const [first, second] = positionals.map((p, i) => {
      try {
        return parseVersionSpec(p);
      } catch (err) {
        throw new UsageError(`RV${i + 1}: ${(err as Error).message}`);
      }
    });
    const filter = filterOf(values);
    return withHistory(values, io, async (h) => {
      const a = await resolveVersion(h, 'RV1', first);
      const b = await resolveVersion(h, 'RV2', second);
      await writeAll(io.out, printDiff(h, a, b, filter, values.output, io.out.isTTY === true));
      return 0;
    });
  },
});

/**
 * The objects that differ between the states at a and b, as the two states are read side by side
 * (each in key order, a kind at a time): neither is held whole, and an object whose revision is the
 * same in both is not decoded.
 */
async function* printDiff(h: History, a: number, b: number, filter: Filter, format: string, tty: boolean): AsyncIterable<string> {
  const yaml = format === 'diff' ? await import('../yaml-diff.js') : undefined;
  for (const kind of [...filter.kinds].sort((x, y) => (collectionOfKind(x) < collectionOfKind(y) ? -1 : 1))) {
    const one = { ...filter, kinds: [kind] };
    for await (const [key, x, y] of pairs(stateInPages(h, a, one), stateInPages(h, b, one))) {
      if (x && y && (x.seq ?? x.object.metadata.resourceVersion) === (y.seq ?? y.object.metadata.resourceVersion)) continue;
      if (!yaml) {
        const patch = jsonPatch(x?.object, y?.object);
        if (patch.length > 0) yield JSON.stringify({ object: labelOf(key), from: String(a), to: String(b), patch }) + '\n';
      } else {
        const d = yaml.unifiedDiff(labelOf(key), x?.object, y?.object, a, b);
        if (d) yield tty ? yaml.colour(d) : d;
      }
    }
  }
}

/** Two streams of objects in key order, merged: each key with what each holds (undefined where it has none). */
async function* pairs(xs: AsyncIterable<Stored[]>, ys: AsyncIterable<Stored[]>): AsyncIterable<[string, Stored | undefined, Stored | undefined]> {
  const left = cursor(xs);
  const right = cursor(ys);
  let x = await left.next();
  let y = await right.next();
  while (x || y) {
    if (!y || (x && x.key < y.key)) {
      yield [x!.key, x, undefined];
      x = await left.next();
    } else if (!x || y.key < x.key) {
      yield [y.key, undefined, y];
      y = await right.next();
    } else {
      yield [x.key, x, y];
      x = await left.next();
      y = await right.next();
    }
  }
}

/** One object at a time from pages of them; undefined at the end. */
function cursor(pages: AsyncIterable<Stored[]>): { next(): Promise<Stored | undefined> } {
  const it = pages[Symbol.asyncIterator]();
  let page: Stored[] = [];
  let i = 0;
  return {
    async next() {
      while (i >= page.length) {
        const r = await it.next();
        if (r.done) return undefined;
        page = r.value;
        i = 0;
      }
      return page[i++];
    },
  };
}
