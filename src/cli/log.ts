/** `orchd log`: the log's changes in order, filtered, as a table, YAML or JSON lines; --follow goes on past the head. */
import { command, oneOf, UsageError, type Flags } from './flags.js';
import { kinds } from '../resources/kinds.js';
import type { Refused } from '../timetravel/core/audit-events.js';
import { customKindsIn } from '../timetravel/core/custom-kinds.js';
import type { Change, Filter, History } from '../timetravel/core/history.js';
import { printChanges } from '../timetravel/print/output.js';
import { progress, type Progress } from '../timetravel/print/progress.js';
import { askedOf, filterIn } from '../timetravel/core/kind-names.js';
import { madeBy, openHistory, rangeNoted, withHistory } from '../timetravel/core/source.js';
import { FILTERS, SHOW, SOURCE, TIME_NOTE, version, WHO } from './timetravel-flags.js';
import { writeAll } from '../timetravel/print/write-out.js';

/** How often --follow looks for what was written since. */
const FOLLOW_MS = 500;

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  name: { value: 'NAME', help: 'only the object of this name (with -n, in that namespace)' },
  type: { value: 'EVENT', multiple: true, help: 'only these events: ADDED, MODIFIED or DELETED; repeat or comma-separate for several', parse: eventTypes },
  ...WHO,
  from: version('the first version shown, or the first committed at or after TIME (default: the oldest kept)'),
  to: version('the last version shown, included, or the last committed at or before TIME (default: the newest)'),
  output: { value: 'FORMAT', short: 'o', default: 'table', help: 'table, yaml or json (one change per line)', parse: oneOf('table', 'yaml', 'json') },
  follow: { help: 'after the head, go on printing what is written, until interrupted' },
  faults: { help: 'the faults the server injected (orchd serve --faults; faults.jsonl in --data-dir), each after the write it followed' },
  audit: { value: 'FILE', help: 'an audit log of the server (orchd serve --audit-log-path): its refused writes are shown beside the changes, by time' },
  ...SHOW,
} as const satisfies Flags;

export const logCommand = command({
  name: 'log',
  summary: 'The changes of the log in order: version, commit time, event, object and who made it.',
  words: '[RECORDING]',
  positionals: [0, 1],
  flags: FLAGS,
  notes: `${TIME_NOTE} A span of times (--from TIME --to TIME) holds the entries committed within it.\nExample: orchd log incident.orchlog --kind webapps -n shop --type DELETED`,
  async run({ values: given, positionals }, io) {
    if (positionals[0] !== undefined && given.file !== undefined) throw new UsageError('give the recording once: as RECORDING or as --file');
    const values = { ...given, file: positionals[0] ?? given.file };
    const asked = askedOf(values);
    const by = madeBy(values);
    const types = new Set(values.type.flat());
    // A refused write is none of the three events: --type leaves it out.
    const only = async function* <T extends Change | Refused>(changes: AsyncIterable<T>): AsyncIterable<T> {
      for await (const c of changes) if (by(c) && (types.size === 0 || ('type' in c && types.has(c.type)))) yield c;
    };
    if (values.follow && values.to !== undefined) throw new UsageError('--follow goes on past the head: it takes no --to');
    if (values.faults && values['data-dir'] === undefined) throw new UsageError('--faults reads the journal in a data folder: it goes with --data-dir');
    let filter!: Filter;
    let last = await withHistory(values, io, async (h) => {
      const { from, to } = await rangeNoted(h, values.from, values.to, io, true);
      // A custom kind is named by the CRDs of the versions shown (the ends first: they are read quickest).
      const found = await filterIn(
        h,
        asked,
        [
          { from: to, to },
          { from, to: from },
          { from, to },
        ],
        values.name,
      );
      filter = types.size === 0 ? found : { ...found, types: [...types] };
      const bar = progress(to - from + 1, 'log', { stream: io.err, out: io.out });
      const logged = values.audit === undefined ? h.changes(from, to, filter) : await besideRefusals(h, from, to, filter, values.audit);
      const changes = only(reported(values.faults ? await besideFaults(logged, values['data-dir']!, h, from, to, filter) : logged, from, bar));
      await writeAll(io.out, printChanges(changes, values.output, h.timesFromLog, true, values['show-managed-fields']));
      bar.stop();
      // A server sends what is committed next as it comes.
      if (values.follow && h.follow) await writeAll(io.out, printChanges(only(h.follow(to, filter)), values.output, h.timesFromLog, false, values['show-managed-fields']), true);
      return to;
    });
    // A data folder or a recording: asked again, twice a second, until interrupted.
    while (values.follow) {
      await new Promise((r) => setTimeout(r, FOLLOW_MS));
      const history = await openHistory(values);
      try {
        if (history.head > last) await writeAll(io.out, printChanges(only(history.changes(last + 1, history.head, filter)), values.output, history.timesFromLog, false, values['show-managed-fields']));
        last = history.head;
      } finally {
        await history.close();
      }
    }
    return 0;
  },
});

/** ADDED, MODIFIED, DELETED, any case, comma-separated. */
function eventTypes(text: string): Change['type'][] {
  return text
    .split(',')
    .filter(Boolean)
    .map((t) => oneOf('ADDED', 'MODIFIED', 'DELETED')(t.toUpperCase()));
}

/** The changes from..to with the audit log's refused writes of the same span between them. */
async function besideRefusals(h: History, from: number, to: number, filter: Filter, file: string): Promise<AsyncIterable<Change | Refused>> {
  const { refusedWrites, withRefusals } = await import('../timetravel/core/audit-events.js');
  // Writes refused for a resource no kind of these versions is (a 404 of a mistyped path) are left out.
  const known = filter.kinds ?? [...kinds, ...(await customKindsIn(h, from, to))];
  const refused = await refusedWrites(file, { ...filter, kinds: known });
  const after = from > 1 ? ((await h.timeOf(from - 1)) ?? -Infinity) : -Infinity;
  const until = to < h.head ? ((await h.timeOf(to + 1)) ?? Infinity) : Infinity;
  return withRefusals(h.changes(from, to, filter), refused, after, until);
}

/** The changes with the faults injected meanwhile after the writes they followed (timetravel/core/fault-events.ts). */
async function besideFaults(changes: AsyncIterable<Change | Refused>, dataDir: string, h: History, from: number, to: number, filter: Filter): Promise<AsyncIterable<Change | Refused>> {
  const { faultsIn, withFaults } = await import('../timetravel/core/fault-events.js');
  const known = filter.kinds ?? [...kinds, ...(await customKindsIn(h, from, to))];
  return withFaults(changes, faultsIn(dataDir, { ...filter, kinds: known }, from, to));
}

/** The changes as they come, the bar told how far along the log they are. */
async function* reported<T extends Change | Refused>(changes: AsyncIterable<T>, from: number, bar: Progress): AsyncIterable<T> {
  for await (const c of changes) {
    if ('rv' in c) bar.update(c.rv - from + 1);
    yield c;
  }
}
