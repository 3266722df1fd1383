/** `orchd state --at`: every object as it was at a version, filtered, as a table, a YAML List or JSON lines. */
import { command, oneOf, UsageError, type Flags } from '../../../src/cli/flags.js';
import { resolveVersion, stateInPages } from '../history.js';
import { printState } from '../output.js';
import { FILTERS, filterOf, SOURCE, TIME_NOTE, version, withHistory } from '../source.js';
import { writeAll } from '../write-out.js';

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  at: version('the version whose state is shown (required)'),
  output: { value: 'FORMAT', short: 'o', default: 'table', help: 'table, yaml (a List) or json (one object per line)', parse: oneOf('table', 'yaml', 'json') },
} as const satisfies Flags;

export const stateCommand = command({
  name: 'state',
  summary: 'Every object as it was at a version or a time.',
  flags: FLAGS,
  notes: TIME_NOTE,
  async run({ values }, io) {
    if (values.at === undefined) throw new UsageError('--at RV|TIME is required');
    const filter = filterOf(values);
    return withHistory(values, io, async (h) => {
      const rv = await resolveVersion(h, '--at', values.at!);
      await writeAll(io.out, printState(rv, stateInPages(h, rv, filter), values.output));
      return 0;
    });
  },
});
