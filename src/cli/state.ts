/** `orchd state --at`: every object as it was at a version (or one of them), filtered, as a table, a YAML List or JSON lines. */
import { command, oneOf, UsageError, type Flags } from './flags.js';
import { everyKindAt } from '../timetravel/core/custom-kinds.js';
import { stateInPages, type StateFilter } from '../timetravel/core/history.js';
import { askedOf, filterIn, splitTarget, targetIn } from '../timetravel/core/kind-names.js';
import { printState } from '../timetravel/print/output.js';
import { counted, progress } from '../timetravel/print/progress.js';
import { resolveNoted, withHistory } from '../timetravel/core/source.js';
import { FILTERS, SHOW, SOURCE, TIME_NOTE, version } from './timetravel-flags.js';
import { writeAll } from '../timetravel/print/write-out.js';

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
    const asked = askedOf(values);
    const one = positionals[0];
    if (one !== undefined) {
      if (values.kind.length > 0) throw new UsageError('give the kind once: as RESOURCE/NAME or as --kind');
      splitTarget(one);
    }
    return withHistory(values, io, async (h) => {
      const rv = await resolveNoted(h, '--at', values.at!, io);
      // A custom kind is one its CRD defines at that version.
      const at = [{ from: rv, to: rv }];
      let filter: StateFilter;
      if (one !== undefined) {
        const target = await targetIn(h, one, values.namespace, at);
        filter = { kinds: [target.kind], namespace: target.kind.namespaced ? values.namespace : undefined, labels: asked.labels, name: target.name };
      } else {
        const f = await filterIn(h, asked, at);
        filter = { ...f, kinds: f.kinds ?? (await everyKindAt(h, rv)) };
      }
      const bar = progress(undefined, 'state', { unit: 'objects', stream: io.err, out: io.out });
      await writeAll(io.out, printState(rv, counted(stateInPages(h, rv, filter), bar), values.output, values['show-managed-fields']));
      bar.stop();
      return 0;
    });
  },
});
