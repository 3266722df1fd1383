/** `orchd diff A B`: what changed between two versions, or two histories (../timetravel/core/diff-sides.ts), object by object, as a unified YAML diff or JSON patches. */
import { command, oneOf, UsageError, type Flags } from './flags.js';
import { partingOf, parseSides, withSources, type DiffSide } from '../timetravel/core/diff-sides.js';
import type { KindStrategy } from '../api/strategy.js';
import { everyKindAt } from '../timetravel/core/custom-kinds.js';
import { collectionOfKind, stateInPages, type StateFilter, type Stored } from '../timetravel/core/history.js';
import { askedOf, filterIn, type Asked } from '../timetravel/core/kind-names.js';
import { jsonPatch, labelOf, shown } from '../timetravel/print/output.js';
import { counted, progress, type Progress } from '../timetravel/print/progress.js';
import { encryptionFrom, resolveNoted, withHistory } from '../timetravel/core/source.js';
import { FILTERS, SHOW, SOURCE, TIME_NOTE } from './timetravel-flags.js';
import { writeAll } from '../timetravel/print/write-out.js';
import { JsonLines } from '../log/msgpack-json.js';

/** The bytes of JSON patches gathered before they are written. */
const LINES_AT_ONCE = 1 << 20;

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  output: { value: 'FORMAT', short: 'o', default: 'diff', help: 'diff (unified YAML, coloured on a terminal) or json-patch (one object per line)', parse: oneOf('diff', 'json-patch') },
  stat: { help: 'one line per changed object (lines added and removed), then how many were added, deleted and modified' },
  ...SHOW,
} as const satisfies Flags;

export const diffCommand = command({
  name: 'diff',
  summary: 'What changed between two versions (or times), or between two histories (a fork and its original), object by object.',
  words: 'A B',
  positionals: [2, 2],
  flags: FLAGS,
  notes: `Exit status, as diff(1)'s: 0 when the two sides are the same, 1 when they differ.
A and B are versions (RV, TIME or HEAD) of the history the flags name, or two histories, each a data
folder or a recording with an optional @RV|TIME|HEAD (its head when none is given):
  orchd diff 48211 HEAD --data-dir ./what-if          what the branch did since the fork
  orchd diff incident.orchlog ./what-if               where the branch and the original part ways
${TIME_NOTE}`,
  async run({ values, positionals }, io) {
    const sides = parseSides(positionals);
    const asked = askedOf(values);
    const how = { format: values.stat ? 'stat' : values.output, tty: io.out.isTTY === true, managedFields: values['show-managed-fields'] };
    const bar = progress(undefined, 'diff', { unit: 'objects', stream: io.err, out: io.out });
    const seen = { differ: false };
    const print = async (a: DiffSide, b: DiffSide) => writeAll(io.out, printDiff(a, b, await diffFilter(asked, a, b), how, bar, seen)).finally(() => bar.stop());
    if ('sources' in sides) {
      if (values['data-dir'] !== undefined || values.server !== undefined || values.file !== undefined)
        throw new UsageError('two histories name their own sources: give no --data-dir, --server or --file');
      const [a, b] = sides.sources.map((s) => s.source);
      const parting = await partingOf(a, b);
      if (parting) io.err.write(`orchd diff: ${parting}\n`);
      await withSources(sides.sources, await encryptionFrom(values['encryption-provider-config']), print);
      return seen.differ ? 1 : 0;
    }
    return withHistory(values, io, async (history) => {
      const [a, b] = sides.versions;
      await print({ history, rv: await resolveNoted(history, 'A', a, io) }, { history, rv: await resolveNoted(history, 'B', b, io) });
      return seen.differ ? 1 : 0;
    });
  },
});

/** What the diff reads: the kinds named (a custom one as either side's CRDs define it), else every kind either side has. */
async function diffFilter(asked: Asked, a: DiffSide, b: DiffSide): Promise<StateFilter> {
  const f = await filterIn(a.history, asked, [
    { from: a.rv, to: a.rv },
    { from: b.rv, to: b.rv, history: b.history },
  ]);
  if (f.kinds) return { ...f, kinds: f.kinds };
  const every = new Map<string, KindStrategy>();
  for (const s of [a, b]) for (const k of await everyKindAt(s.history, s.rv)) every.set(collectionOfKind(k), k);
  return { ...f, kinds: [...every.values()] };
}

/**
 * The objects that differ between the states of sides a and b, as the two states are read side by
 * side (each in key order, a kind at a time): neither is held whole, and an object whose revision
 * (in one history) or stored bytes (in two) are the same in both is not decoded.
 */
async function* printDiff(
  a: DiffSide,
  b: DiffSide,
  filter: StateFilter,
  how: { format: string; tty: boolean; managedFields: boolean },
  bar: Progress,
  seen: { differ: boolean },
): AsyncIterable<string | Buffer> {
  const yaml = how.format !== 'json-patch' ? await import('../timetravel/print/yaml-diff.js') : undefined;
  // JSON patches, many into one buffer; an added object's written from its stored bytes (below).
  const lines = new JsonLines(!how.managedFields);
  const same = a.history === b.history ? sameVersion : sameBytes;
  const [from, to] = [a, b].map((s) => (s.source === undefined ? String(s.rv) : `${s.rv} (${s.source})`));
  const count = { added: 0, deleted: 0, modified: 0, plus: 0, minus: 0 };
  for (const kind of [...filter.kinds].sort((x, y) => (collectionOfKind(x) < collectionOfKind(y) ? -1 : 1))) {
    const one = { ...filter, kinds: [kind] };
    for await (const batch of pairs(stateInPages(a.history, a.rv, one), counted(stateInPages(b.history, b.rv, one), bar))) {
      for (const [key, x, y] of batch) {
        if (x && y && same(x, y)) continue;
        if (lines.length >= LINES_AT_ONCE) yield lines.take();
        // An added object's patch holds it whole: its JSON from its stored bytes, without decoding it (most of a diff over many writes).
        const added = !yaml && !x && y?.msgpack?.();
        if (
          added &&
          lines.addInside(`{"object":${JSON.stringify(labelOf(key))},"from":${JSON.stringify(from)},"to":${JSON.stringify(to)},"patch":[{"op":"add","path":"","value":`, added, '}]}\n', y!.seq)
        ) {
          seen.differ = true;
          continue;
        }
        const before = x && shown(x.object, how.managedFields);
        const after = y && shown(y.object, how.managedFields);
        if (!yaml) {
          const patch = jsonPatch(before, after);
          if (patch.length > 0) seen.differ = true;
          if (patch.length > 0) lines.addText(JSON.stringify({ object: labelOf(key), from, to, patch }) + '\n');
        } else if (how.format === 'stat') {
          const { added, removed } = yaml.lineCounts(before, after);
          if (added + removed === 0) continue;
          seen.differ = true;
          count[!before ? 'added' : !after ? 'deleted' : 'modified']++;
          count.plus += added;
          count.minus += removed;
          yield ` ${labelOf(key)} | +${added} -${removed}\n`;
        } else {
          const d = yaml.unifiedDiff(labelOf(key), before, after, from, to);
          if (d) seen.differ = true;
          if (d) yield how.tty ? yaml.colour(d) : d;
        }
      }
    }
  }
  if (lines.length > 0) yield lines.take();
  if (how.format === 'stat') {
    const changed = count.added + count.deleted + count.modified;
    yield ` ${changed} object${changed === 1 ? '' : 's'} changed: ${count.added} added, ${count.deleted} deleted, ${count.modified} modified; ${count.plus} lines added, ${count.minus} removed\n`;
  }
}

const sameVersion = (x: Stored, y: Stored): boolean => (x.seq ?? x.object.metadata.resourceVersion) === (y.seq ?? y.object.metadata.resourceVersion);

/** Across two histories a version number may name different writes: the stored bytes tell (else the diff does). */
function sameBytes(x: Stored, y: Stored): boolean {
  const [p, q] = [x.msgpack?.(), y.msgpack?.()];
  return p !== undefined && q !== undefined && p.equals(q);
}

/**
 * Two streams of objects in key order, merged: each key with what each holds (undefined where it
 * has none), in batches, each of what both pages in hand hold (an await per object cost as much as
 * the rest of a diff of a million unchanged ones). A page is asked for only once the batch before
 * is done with: a reader may reuse a page's bytes for the next one.
 */
async function* pairs(xs: AsyncIterable<Stored[]>, ys: AsyncIterable<Stored[]>): AsyncIterable<[string, Stored | undefined, Stored | undefined][]> {
  const left = cursor(xs);
  const right = cursor(ys);
  for (;;) {
    await left.fill();
    await right.fill();
    const batch: [string, Stored | undefined, Stored | undefined][] = [];
    for (;;) {
      const x = left.peek();
      const y = right.peek();
      // A side whose page is done and that has more: the batch ends, the page is read.
      if ((x === undefined && !left.done) || (y === undefined && !right.done) || (x === undefined && y === undefined)) break;
      if (!y || (x && x.key < y.key)) {
        batch.push([x!.key, x, undefined]);
        left.skip();
      } else if (!x || y.key < x.key) {
        batch.push([y.key, undefined, y]);
        right.skip();
      } else {
        batch.push([x.key, x, y]);
        left.skip();
        right.skip();
      }
    }
    if (batch.length > 0) yield batch;
    else if (left.done && right.done) return;
  }
}

/** Objects one at a time from pages of them: the one in hand (undefined when its page is done, or all are), and the next page read when asked. */
function cursor(pages: AsyncIterable<Stored[]>) {
  const it = pages[Symbol.asyncIterator]();
  let page: Stored[] = [];
  let i = 0;
  const c = {
    done: false,
    peek: (): Stored | undefined => page[i],
    skip: (): void => void i++,
    async fill(): Promise<void> {
      while (!c.done && i >= page.length) {
        const r = await it.next();
        if (r.done) c.done = true;
        else [page, i] = [r.value, 0];
      }
    },
  };
  return c;
}
