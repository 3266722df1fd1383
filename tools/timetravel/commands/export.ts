/** `orchd export`: a recording of a range of the history (the state at its start, then every entry), for `replay` and the other commands' --file. */
import { open as openFile } from 'node:fs/promises';
import { command, UsageError, type Flags } from '../../../src/cli/flags.js';
import { resolveRange } from '../history.js';
import { SOURCE, TIME_NOTE, version, withHistory } from '../source.js';

const { file: _recording, ...READ_FROM } = SOURCE;

const FLAGS = {
  ...READ_FROM,
  from: version('the version whose state the recording starts with (default: the oldest kept)'),
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
    const { writeRecording } = await import('../recording-write.js');
    const { progress } = await import('../progress.js');
    // --file is where the recording goes, not one to read.
    const source = { 'data-dir': values['data-dir'], server: values.server, 'encryption-provider-config': values['encryption-provider-config'] };
    return withHistory(source, io, async (h) => {
      const { from, to } = await resolveRange(h, values.from, values.to);
      const fh = values.file === undefined ? undefined : await openFile(values.file, 'w');
      const bar = progress(to - from, 'export');
      let chunks: Buffer[] = [];
      let size = 0;
      // Records are gathered into writes of up to 1 MiB: one write per record would cost a system call each.
      const flush = async () => {
        const gathered = chunks;
        chunks = [];
        size = 0;
        // To a file, one vectored write of the pieces (no copy into one buffer).
        if (fh) await fh.writev(gathered);
        else if (!io.out.write(Buffer.concat(gathered))) await new Promise((r) => io.out.once('drain', r));
      };
      try {
        const n = await writeRecording(
          h,
          from,
          to,
          (b) => {
            chunks.push(b);
            size += b.length;
            // Fewer pieces than a vectored write takes at once (IOV_MAX, 1024 on Linux).
            if (size >= 1 << 20 || chunks.length >= 1000) return flush();
          },
          (rv) => bar.update(rv - from),
        );
        await flush();
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
