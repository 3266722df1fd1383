/** `orchd state --at`: every object as it was at a version (or one of them), filtered, as a table, a YAML List or JSON lines. */
import { command, oneOf, UsageError, type Flags } from '../../../src/cli/flags.js';
import { makeFilter, stateInPages } from '../history.js';
import { printState } from '../output.js';
import { counted, progress } from '../progress.js';
import { FILTERS, filterOf, resolveNoted, SHOW, SOURCE, targetOf, TIME_NOTE, version, withHistory } from '../source.js';
import { writeAll } from '../write-out.js';

const FLAGS = {
  ...SOURCE,
  ...FILTERS,
  at: version('the version whose state is shown (required)'),
  output: { value: 'FORMAT', short: 'o', default: 'table', help: 'table, yaml (a List) or json (one object per line)', parse: oneOf('table', 'yaml', 'json') },
  ...SHOW,
} as const satisfies Flags;

export const stateCommand = command({
  name: 'state',
  summary: 'Every object as it was at a version or a time; or one object, named as RESOURCE/NAME.',
  words: '[RESOURCE/NAME]',
  positionals: [0, 1],
  flags: FLAGS,
  notes: `${TIME_NOTE}\nExample: orchd state --data-dir ./data --at 2026-11-26T02:14:00Z vap/event-guard -o yaml`,
  async run({ values, positionals }, io) {
    if (values.at === undefined) throw new UsageError('--at RV|TIME is required');
    let filter = filterOf(values);
    if (positionals[0] !== undefined) {
      if (values.kind.length > 0) throw new UsageError('give the kind once: as RESOURCE/NAME or as --kind');
      const target = targetOf(positionals[0], values.namespace);
      filter = makeFilter({ kind: [`${target.kind.plural}.${target.kind.group}`], namespace: target.kind.namespaced ? values.namespace : undefined, selector: values.selector, name: target.name });
    }
    return withHistory(values, io, async (h) => {
      const rv = await resolveNoted(h, '--at', values.at!, io);
      const bar = progress(undefined, 'state', { unit: 'objects', stream: io.err, out: io.out });
      await writeAll(io.out, printState(rv, counted(stateInPages(h, rv, filter), bar), values.output, values['show-managed-fields']));
      bar.stop();
      return 0;
    });
  },
});
