/** `orchd state --at`: every object as it was at a version (or one of them), filtered, as a table, a YAML List or JSON lines. */
import { command, oneOf, UsageError, type Flags } from './flags.js';
import { everyKindAt } from '../timetravel/core/custom-kinds.js';
import { TimeTravelError } from '../timetravel/core/errors.js';
import { stateInPages, type History, type StateFilter, type Stored } from '../timetravel/core/history.js';
import { askedOf, filterIn, targetIn } from '../timetravel/core/kind-names.js';
import { splitTarget, type Target } from '../timetravel/core/target.js';
import { formatTime, printState } from '../timetravel/print/output.js';
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
      let pages: AsyncIterable<Stored[]> | undefined;
      if (one !== undefined) {
        const target = await targetIn(h, one, values.namespace, at);
        filter = { kinds: [target.kind], namespace: target.kind.namespaced ? values.namespace : undefined, labels: asked.labels, name: target.name, managedFields: values['show-managed-fields'] };
        // One object is one page at most: read first, so that one not there is said, not printed as nothing.
        const found: Stored[] = [];
        for await (const page of stateInPages(h, rv, filter)) found.push(...page);
        if (found.length === 0 && asked.labels === undefined) throw new TimeTravelError(await notThere(h, target, rv));
        pages = (async function* () {
          yield found;
        })();
      } else {
        const f = await filterIn(h, asked, at);
        filter = { ...f, kinds: f.kinds ?? (await everyKindAt(h, rv)), managedFields: values['show-managed-fields'] };
      }
      const bar = progress(undefined, 'state', { unit: 'objects', stream: io.err, out: io.out });
      await writeAll(io.out, printState(rv, counted(pages ?? stateInPages(h, rv, filter), bar), values.output, values['show-managed-fields']));
      bar.stop();
      return 0;
    });
  },
});

/** Why an object is not in the state at rv, as far as the log tells: when it was deleted before, when it was created after. */
async function notThere(h: History, target: Target, rv: number): Promise<string> {
  const versions = await h.versionsOf(target.key);
  const when = (c: { rv: number; time: number | undefined }) => `${c.rv}${c.time === undefined ? '' : ` (${formatTime(c.time, h.timesFromLog)})`}`;
  const before = versions.filter((c) => c.rv <= rv).at(-1);
  const after = versions.find((c) => c.rv > rv);
  const said = [
    ...(before?.type === 'DELETED' ? [`deleted at ${when(before)}`] : []),
    ...(after ? [`${after.type === 'DELETED' ? 'deleted' : before?.type === 'DELETED' ? 'created again' : 'created'} at ${when(after)}`] : []),
  ];
  const why = said.length > 0 ? said.join('; ') : `no version of it in the log (from version ${h.oldest + 1} to ${h.head})`;
  return `${target.label}: not there at version ${rv}: ${why}`;
}
