/** `orchd replay`: a recording or a data folder's log served again as a read-only API server, at the recorded pace (replay-server.ts). */
import { command, portNumber, UsageError, wholeNumber, type Flags } from '../../../src/cli/flags.js';
import { jsonLogger } from '../../../src/observability/logger.js';
import { formatReport } from '../replay-loop.js';
import { serveControl, terminalKeys } from '../replay-control.js';
import { parseSpeed } from '../replay-pacing.js';
import { openHistory, SOURCE } from '../source.js';

const { server: _server, ...READ_FROM } = SOURCE;

const FLAGS = {
  ...READ_FROM,
  speed: { value: 'SPEED', default: '1', help: 'how fast: 1 is the recorded pace, 10 ten times faster, max as fast as the watchers read', parse: parseSpeed },
  port: { value: 'PORT', default: '0', help: 'port of the replay server on 127.0.0.1 (0 picks a free one)', parse: portNumber },
  from: { value: 'RV', help: "the first entry replayed (default the recording's first); the server starts with the state before it", parse: wholeNumber(1) },
  to: { value: 'RV', help: "the last entry replayed, included (default the recording's last)", parse: wholeNumber(1) },
  watchers: { value: 'N', default: '0', help: 'hold the replay until this many watches are open (start the controller first: the stream starts when its informers watch)', parse: wholeNumber(0) },
  'pause-at': { value: 'RV', help: 'pause after the entry RV is sent (RV included), before the next one', parse: wholeNumber(0) },
  'control-port': { value: 'PORT', help: 'serve the controls on 127.0.0.1:PORT: POST /pause, /resume, /step, /jump?to=RV; GET /status', parse: portNumber },
  keep: { help: 'after the last entry, go on serving the final state until interrupted' },
} as const satisfies Flags;

export const replayCommand = command({
  name: 'replay',
  summary: "Serve a recording's (or a data folder's) changes again as a read-only API server, at the recorded pace or faster, for a controller to watch.",
  words: '[RECORDING]',
  positionals: [0, 1],
  flags: FLAGS,
  notes: `On a terminal: space pauses or resumes, s steps one entry, e jumps to the end, q quits.
The run's figures (entries, duration, rate) go to stdout at the end.`,
  async run({ values, positionals }, io) {
    if (positionals[0] !== undefined && values.file !== undefined) throw new UsageError('give the recording once: as RECORDING or as --file');
    const history = await openHistory({ ...values, file: positionals[0] ?? values.file });
    const { startReplay } = await import('../replay-server.js');
    const replay = await startReplay({
      history,
      speed: values.speed,
      port: values.port,
      from: values.from,
      to: values.to,
      watchers: values.watchers,
      pauseAt: values['pause-at'],
      logger: jsonLogger(process.stderr, 'warn'),
    });
    let interrupted!: () => void;
    const stop = new Promise<void>((resolve) => (interrupted = resolve));
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const controls = values['control-port'] === undefined ? undefined : await serveControl(replay.control, values['control-port']);
    const keys = terminalKeys(replay.control, interrupted);
    try {
      io.out.write(`serving ${replay.url}: the state at resourceVersion ${replay.initialVersion}, then entries ${replay.from}..${replay.to}\n`);
      if (controls) io.out.write(`controls at ${controls.url}: POST /pause, /resume, /step, /jump?to=RV; GET /status\n`);
      const report = await Promise.race([replay.done, stop.then(() => undefined)]);
      if (!report) return 130;
      io.out.write(formatReport(report) + '\n');
      if (values.keep) {
        io.out.write(`serving the final state at ${replay.url} until interrupted\n`);
        await stop;
      }
      return 0;
    } finally {
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      keys.close();
      await controls?.close();
      await replay.close();
    }
  },
});
