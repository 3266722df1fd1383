/** `orchd history RESOURCE/NAME`: every version of one object still in the log, each with what changed, who and when. */
import { command, oneOf, type Flags } from './flags.js';
import type { KubeObject } from '../api/types.js';
import type { Change, History } from '../timetravel/core/history.js';
import type { Target } from '../timetravel/core/target.js';
import { TimeTravelError } from '../timetravel/core/errors.js';
import type { Progress } from '../timetravel/print/progress.js';
import { FILTERS, SHOW, SOURCE, version, WHO } from './timetravel-flags.js';

const FLAGS = {
  ...SOURCE,
  namespace: FILTERS.namespace,
  ...WHO,
  from: version('only versions from this one, or from the first committed at or after TIME'),
  to: version('only versions up to this one, included, or to the last committed at or before TIME'),
  output: {
    value: 'FORMAT',
    short: 'o',
    default: 'diff',
    help: 'diff (YAML hunks under a line per version), yaml (each version whole, a document each) or json-patch (one version per line)',
    parse: oneOf('diff', 'yaml', 'json-patch'),
  },
  ...SHOW,
} as const satisfies Flags;

export const historyCommand = command({
  name: 'history',
  summary: 'Every version of one object still in the log, with its diff, manager and time.',
  words: 'RESOURCE/NAME',
  positionals: [1, 1],
  flags: FLAGS,
  notes: 'RESOURCE is as kubectl names it: events/e1, namespaces/default, vap/event-guard, or a custom kind its CustomResourceDefinition names (webapps/shop, wa/shop, webapps.apps.example.com/shop).',
  async run({ values, positionals }, io) {
    // Loaded here, not with the flag table: `orchd history --help` loads only the table. A built-in
    // kind's name needs no kind loaded (target.ts), and a bar shows only on a terminal's stderr.
    const [{ builtInTarget, splitTarget }, { madeBy, rangeNoted, withHistory }, { writeAll }] = await Promise.all([
      import('../timetravel/core/target.js'),
      import('../timetravel/core/source.js'),
      import('../timetravel/print/write-out.js'),
    ]);
    splitTarget(positionals[0]);
    return withHistory(values, io, async (h) => {
      const target = builtInTarget(positionals[0], values.namespace) ?? (await customTarget(h, positionals[0], values.namespace));
      const versions = await h.versionsOf(target.key);
      if (versions.length === 0) throw new TimeTravelError(`${target.label}: no version of it in the log (from version ${h.oldest + 1} to ${h.head})`);
      const span = values.from === undefined && values.to === undefined ? undefined : await rangeNoted(h, values.from, values.to, io, true);
      // Each version's diff is from the one before it, whoever made that one and whenever.
      const who = madeBy(values);
      const by = (c: Change) => who(c) && (!span || (c.rv >= span.from && c.rv <= span.to));
      const bar = io.err.isTTY ? (await import('../timetravel/print/progress.js')).progress(versions.length, 'history', { unit: 'versions', stream: io.err, out: io.out }) : NO_BAR;
      await writeAll(io.out, printHistory(versions, values.output, h.timesFromLog, io.out.isTTY === true, values['show-managed-fields'], by, bar));
      bar.stop();
      return 0;
    });
  },
});

/** A custom kind's object: of a kind its CRD defines now, else one any CRD still in the log defined (the object may be of a kind since deleted). */
async function customTarget(h: History, target: string, namespace: string | undefined): Promise<Target> {
  const { targetIn } = await import('../timetravel/core/kind-names.js');
  return targetIn(h, target, namespace, [
    { from: h.head, to: h.head },
    { from: h.oldest, to: h.head },
  ]);
}

/** progress() answers this where stderr is no terminal: then cli-progress is not loaded at all. */
const NO_BAR: Progress = { update() {}, stop() {} };

/** Each version of an object with what changed since the one before. */
async function* printHistory(versions: Change[], format: string, timesFromLog: boolean, tty: boolean, managedFields: boolean, shows: (c: Change) => boolean, bar: Progress): AsyncIterable<string> {
  const { formatTime, jsonPatch, managerOf, shown, userOf } = await import('../timetravel/print/output.js');
  const yaml = format === 'diff' ? await import('../timetravel/print/yaml-diff.js') : undefined;
  const { stringify } = format === 'yaml' ? await import('../timetravel/print/yaml-text.js') : { stringify: undefined };
  let before: Change | undefined;
  let done = 0;
  for (const c of versions) {
    bar.update(++done);
    if (!shows(c)) {
      before = c;
      continue;
    }
    // A delete's value is the object's last state: its diff is the object going away.
    const prev = before?.type === 'DELETED' || !before ? undefined : shown(before.object, managedFields);
    const next: KubeObject | undefined = c.type === 'DELETED' ? undefined : shown(c.object, managedFields);
    const time = c.time === undefined ? null : formatTime(c.time, timesFromLog);
    const who = managerOf(c, before?.type === 'DELETED' ? undefined : before?.object);
    // A recording that starts mid-history holds the object's first version as its state, not as a write: said so, not called a create.
    const type = c.start ? 'FIRST' : c.type;
    const about = { resourceVersion: String(c.rv), time, type, user: userOf(c), manager: who };
    if (stringify) yield `---\n${stringify({ ...about, object: shown(c.object, managedFields) })}`;
    else if (!yaml) yield JSON.stringify({ ...about, patch: jsonPatch(prev, next) }) + '\n';
    else {
      // A recording exported before writers were kept in its starting state does not say who wrote it.
      const head =
        c.start && !c.writer
          ? `# ${c.rv}   FIRST IN THE RECORDING (written before it starts: when and by whom is not in it; managedFields name ${who})\n`
          : `# ${c.rv}   ${formatTime(c.time, timesFromLog)}   ${c.start ? 'FIRST IN THE RECORDING' : type}   ${userOf(c)}   ${who}\n`;
      const body = yaml.hunks(prev, next);
      yield tty ? yaml.colour(head + body) : head + body;
    }
    before = c;
  }
}
