/** `orchd history RESOURCE/NAME`: every version of one object still in the log, each with what changed, who and when. */
import { command, oneOf, UsageError, type Flags } from '../../../src/cli/flags.js';
import type { KubeObject } from '../../../src/resources/types.js';
import { resolveKind, TimeTravelError, type Change } from '../history.js';
import { formatTime, jsonPatch, managerOf } from '../output.js';
import { FILTERS, SOURCE, withHistory } from '../source.js';
import { writeAll } from '../write-out.js';

const FLAGS = {
  ...SOURCE,
  namespace: FILTERS.namespace,
  output: { value: 'FORMAT', short: 'o', default: 'diff', help: 'diff (YAML hunks under a line per version) or json-patch (one version per line)', parse: oneOf('diff', 'json-patch') },
} as const satisfies Flags;

export const historyCommand = command({
  name: 'history',
  summary: 'Every version of one object still in the log, with its diff, manager and time.',
  words: 'RESOURCE/NAME',
  positionals: [1, 1],
  flags: FLAGS,
  notes: 'RESOURCE is as kubectl names it: events/e1, namespaces/default, vap/event-guard.',
  async run({ values, positionals }, io) {
    const [target] = positionals;
    const slash = target.indexOf('/');
    if (slash <= 0 || slash === target.length - 1) throw new UsageError('history takes RESOURCE/NAME (e.g. events/e1, namespaces/default)');
    const kind = resolveKind(target.slice(0, slash));
    const name = target.slice(slash + 1);
    if (kind.namespaced && values.namespace === undefined) throw new UsageError(`${kind.plural} are namespaced: give -n NAMESPACE`);
    const key = `${kind.group}/${kind.plural}/${kind.namespaced ? values.namespace : ''}/${name}`;
    return withHistory(values, io, async (h) => {
      const versions = await h.versionsOf(key);
      if (versions.length === 0) throw new TimeTravelError(`${target}${kind.namespaced ? ` in namespace ${values.namespace}` : ''}: no version of it in the log (from version ${Math.max(h.oldest, 1)} to ${h.head})`);
      await writeAll(io.out, printHistory(versions, values.output, h.timesFromLog, io.out.isTTY === true));
      return 0;
    });
  },
});

/** Each version of an object with what changed since the one before. */
async function* printHistory(versions: Change[], format: string, timesFromLog: boolean, tty: boolean): AsyncIterable<string> {
  const yaml = format === 'diff' ? await import('../yaml-diff.js') : undefined;
  let before: Change | undefined;
  for (const c of versions) {
    // A delete's value is the object's last state: its diff is the object going away.
    const prev = before?.type === 'DELETED' ? undefined : before?.object;
    const next: KubeObject | undefined = c.type === 'DELETED' ? undefined : c.object;
    if (!yaml) {
      yield JSON.stringify({ resourceVersion: String(c.rv), time: c.time === undefined ? null : formatTime(c.time, timesFromLog), type: c.type, manager: managerOf(c, prev), patch: jsonPatch(prev, next) }) + '\n';
    } else {
      const head = `# ${c.rv}   ${formatTime(c.time, timesFromLog)}   ${c.type}   ${managerOf(c, prev)}\n`;
      const body = yaml.hunks(prev, next);
      yield tty ? yaml.colour(head + body) : head + body;
    }
    before = c;
  }
}
