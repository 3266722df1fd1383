/** `orchd export`: a recording of a range of the history (the state at its start, then every entry), for `replay` and the other commands' --file. */
import { open as openFile } from 'node:fs/promises';
import { command, UsageError, type Flags } from './flags.js';
import { rangeNoted, withHistory } from '../timetravel/core/source.js';
import { SOURCE, TIME_NOTE, version } from './timetravel-flags.js';

const { file: _recording, ...READ_FROM } = SOURCE;

const FLAGS = {
  ...READ_FROM,
  from: version('the version whose state the recording starts with, then its entries after it (default: the oldest kept; 0, before the first entry, when the log was never compacted)'),
  to: version('the last entry recorded, included (default: the newest)'),
  file: { value: 'FILE', short: 'f', help: 'write the recording here instead of to stdout' },
} as const satisfies Flags;

export const exportCommand = command({
  name: 'export',
  summary: 'Write a recording of the history from one version to another, to replay or read elsewhere.',
  flags: FLAGS,
  notes: `${TIME_NOTE}\nExample: orchd export --data-dir ./data --from 2026-11-26T02:00:00Z > incident.orchlog`,
  async run({ values }, io) {
    if (values.file === undefined && io.out.isTTY) throw new UsageError('a recording is binary: redirect it to a file (> incident.orchlog) or give --file');
    const { writeRecording } = await import('../timetravel/recording/write.js');
    const { progress } = await import('../timetravel/print/progress.js');
    // --file is where the recording goes, not one to read.
    const source = { 'data-dir': values['data-dir'], server: values.server, 'encryption-provider-config': values['encryption-provider-config'] };
    return withHistory(source, io, async (h) => {
      // A recording starts with a state, the oldest readable one by default: at 0 of a log never
      // compacted, the empty state before its first entry, so the recording holds every entry.
      const whole = values.from === undefined || ('rv' in values.from && values.from.rv === 0 && h.oldest === 0);
      const range = await rangeNoted(h, whole ? undefined : values.from, values.to, io);
      const [from, to] = [whole ? range.from - 1 : range.from, range.to];
      const fh = values.file === undefined ? undefined : await openFile(values.file, 'w');
      const bar = progress(to - from, 'export', { stream: io.err });
      // A page at a time, one write each; the writer reuses the buffer once it is written.
      const write = async (b: Buffer) => {
        if (fh) for (let at = 0; at < b.length;) at += (await fh.write(b, at)).bytesWritten;
        else await new Promise<void>((resolve, reject) => io.out.write(b, (err) => (err ? reject(err) : resolve())));
      };
      try {
        const n = await writeRecording(h, from, to, write, (rv) => bar.update(rv - from));
        await fh?.sync();
        bar.stop();
        io.err.write(`orchd export: the state at ${from} and ${n} entries to ${to}${values.file ? ` written to ${values.file}` : ''}\n`);
      } finally {
        await fh?.close();
      }
      return 0;
    });
  },
});
