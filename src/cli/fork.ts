/** `orchd fork`: a new data folder holding a recording's (or a data folder's) history up to a version, for `orchd serve` to go on from (../timetravel/fork/fork.ts). */
import { command, UsageError, type Flags } from './flags.js';
import { resolveVersion, type History } from '../timetravel/core/history.js';
import { encryptionFrom } from '../timetravel/core/source.js';
import { SOURCE, TIME_NOTE, version } from './timetravel-flags.js';

const FLAGS = {
  'source-data-dir': { value: 'DIR', help: "fork an orchd's data folder instead of a recording (of a stopped or a running server: a snapshot of its log is read)" },
  file: SOURCE.file,
  at: version('the last version the fork takes from the source (required); HEAD is its newest'),
  'data-dir': { value: 'DIR', help: 'the data folder to make (required): new, or an empty folder' },
  'encryption-provider-config': {
    value: 'FILE',
    help: 'the EncryptionConfiguration the fork is written with (as a server with it writes), and that the source data folder was written with',
  },
} as const satisfies Flags;

export const forkCommand = command({
  name: 'fork',
  summary: 'Make a new data folder holding the history up to a version, for a writable server to go on from it.',
  words: '[RECORDING]',
  positionals: [0, 1],
  flags: FLAGS,
  notes: `${TIME_NOTE}
The fork reads at every version from the source's oldest to --at, as the source does, and its next write
takes the version after --at; the source is only read. fork.json in the new folder says where it came from.
Example: orchd fork incident.orchlog --at 48211 --data-dir ./what-if && orchd serve --data-dir ./what-if --port 8081`,
  async run({ values, positionals }, io) {
    if (positionals[0] !== undefined && values.file !== undefined) throw new UsageError('give the recording once: as RECORDING or as --file');
    const file = positionals[0] ?? values.file;
    const folder = values['source-data-dir'];
    if ((file === undefined) === (folder === undefined)) throw new UsageError('give exactly one source: a RECORDING or --source-data-dir');
    if (values.at === undefined) throw new UsageError('--at RV|TIME|HEAD is required');
    const target = values['data-dir'];
    if (target === undefined) throw new UsageError('--data-dir (the folder to make) is required');
    const { checkForkTarget, makeFork } = await import('../timetravel/fork/fork.js');
    // Before the source is read: a folder that holds something is refused at once.
    await checkForkTarget(target);
    const encryption = await encryptionFrom(values['encryption-provider-config']);
    let history: History;
    if (file !== undefined) history = await (await import('../timetravel/sources/recording.js')).openRecordingHistory(file);
    else history = await (await import('../timetravel/sources/data-dir.js')).openDataDir(folder!, encryption);
    try {
      const at = await resolveVersion(history, '--at', values.at);
      const { readForkPoints } = await import('../config/fork-origin.js');
      await makeFork({
        history,
        at,
        target,
        source: file ?? folder!,
        ancestors: folder === undefined ? [] : await readForkPoints(folder),
        // A recording is read to its end: one damaged past the fork point is refused too.
        checkTo: file === undefined ? at : history.head,
        encryption,
        ...(folder === undefined ? {} : { sharedFrom: folder }),
      });
      io.out.write(`forked ${file ?? folder} at ${at} into ${target}: versions ${Math.max(history.oldest, 1)}..${at} are the source's, the next write takes ${at + 1}\n`);
      return 0;
    } finally {
      await history.close();
    }
  },
});
