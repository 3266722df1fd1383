/** `orchd log`: the log's changes in order, filtered, as a table, YAML or JSON lines; --follow goes on past the head. */
import { command, oneOf, UsageError, type Flags } from '../../../src/cli/flags.js';
import { resolveRange } from '../history.js';
import { printChanges } from '../output.js';
import { FILTERS, filterOf, openHistory, SOURCE, TIME_NOTE, version, withHistory } from '../source.js';
import { writeAll } from '../write-out.js';

/** How often --follow looks for what was written since. */
const FOLLOW_MS = 1000;

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  from: version('the first version shown (default: the oldest kept)'),
  to: version('the last version shown, included (default: the newest)'),
  output: { value: 'FORMAT', short: 'o', default: 'table', help: 'table, yaml or json (one change per line)', parse: oneOf('table', 'yaml', 'json') },
  follow: { help: 'after the head, go on printing what is written, until interrupted' },
} as const satisfies Flags;

export const logCommand = command({
  name: 'log',
  summary: 'The changes of the log in order: version, commit time, event, object and who made it.',
  flags: FLAGS,
  notes: TIME_NOTE,
  async run({ values }, io) {
    const filter = filterOf(values);
    if (values.follow && values.to !== undefined) throw new UsageError('--follow goes on past the head: it takes no --to');
    let last = await withHistory(values, io, async (h) => {
      const { from, to } = await resolveRange(h, values.from, values.to);
      await writeAll(io.out, printChanges(h.changes(from, to, filter), values.output, h.timesFromLog));
      return to;
    });
    while (values.follow) {
      await new Promise((r) => setTimeout(r, FOLLOW_MS));
      const history = await openHistory(values);
      try {
        if (history.head > last) await writeAll(io.out, printChanges(history.changes(last + 1, history.head, filter), values.output, history.timesFromLog, false));
        last = history.head;
      } finally {
        await history.close();
      }
    }
    return 0;
  },
});
