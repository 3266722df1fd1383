/** `orchd replay`: a recording or a data folder's log served again as a read-only API server, at the recorded pace (../timetravel/replay/server.ts). */
import { command, portNumber, UsageError, wholeNumber, type Flags, type Io, type Values } from './flags.js';
import { jsonLogger } from '../observability/logger.js';
import type { Running } from '../serve.js';
import type { ServeFork } from '../timetravel/replay/fork.js';
import { formatReport } from '../timetravel/replay/loop.js';
import { serveControl, terminalKeys } from '../timetravel/replay/control.js';
import { parseSpeed } from '../timetravel/replay/pacing.js';
import { parseVersionSpec } from '../timetravel/core/version-spec.js';
import { openHistory, resolveNoted } from '../timetravel/core/source.js';
import type { History } from '../timetravel/core/history.js';
import { SOURCE, TIME_NOTE } from './timetravel-flags.js';

const { server: _server, ...READ_FROM } = SOURCE;

const FLAGS = {
  ...READ_FROM,
  speed: { value: 'SPEED', default: '1', help: 'how fast: 1 is the recorded pace, 10 ten times faster, max as fast as the watchers read', parse: parseSpeed },
  port: { value: 'PORT', default: '0', help: 'port of the replay server on 127.0.0.1 (0 picks a free one)', parse: portNumber },
  from: { value: 'RV', help: "the first entry replayed (default the recording's first); the server starts with the state before it", parse: wholeNumber(1) },
  to: { value: 'RV', help: "the last entry replayed, included (default the recording's last)", parse: wholeNumber(1) },
  watchers: {
    value: 'N',
    default: '0',
    help: "hold the replay until this many watches are open (start the controller first: the stream starts when its informers watch); what it waits for is said on stderr every 5 s. A controller of a custom kind whose CRD the recording creates after its start gets 404 and never watches: give --from after the CRD's creation",
    parse: wholeNumber(0),
  },
  'pause-at': { value: 'RV|TIME', help: 'pause once the entry RV (or the last one committed at or before TIME) is sent, RV included, before the next one', parse: parseVersionSpec },
  'control-port': { value: 'PORT', help: 'serve the controls on 127.0.0.1:PORT: POST /pause, /resume, /step, /jump?to=RV; GET /status', parse: portNumber },
  keep: { help: 'after the last entry, go on serving the final state until interrupted' },
  fork: {
    value: 'DIR',
    help: 'let the replay be forked: POST /fork on the control port (or the f key) makes DIR a fork at the version the replay has sent and serves it, writable, on the same port (with neither, at --pause-at); the replay stays up at its end until forked or interrupted',
  },
} as const satisfies Flags;

export const replayCommand = command({
  name: 'replay',
  summary: "Serve a recording's (or a data folder's) changes again as a read-only API server, at the recorded pace or faster, for a controller to watch.",
  words: '[RECORDING]',
  positionals: [0, 1],
  flags: FLAGS,
  notes: `${TIME_NOTE}
On a terminal: space pauses or resumes, s steps one entry, e jumps to the end, f forks (with --fork), q quits.
The run's figures (entries, duration, rate) go to stdout at the end.
Example: orchd replay incident.orchlog --pause-at 48000 --fork ./what-if   (step with s, then f: a writable server on ./what-if)`,
  async run({ values, positionals }, io) {
    const { recording, forksAtPause } = await checkedSource(values, positionals);
    const { history, pauseAt } = await openSource(values, recording, io);
    const { startReplay } = await import('../timetravel/replay/server.js');
    const logger = jsonLogger(process.stderr, 'warn');
    const replay = await startReplay({
      history,
      speed: values.speed,
      port: values.port,
      from: values.from,
      to: values.to,
      watchers: values.watchers,
      pauseAt,
      logger,
      onWaiting: (text) => io.err.write(`orchd replay: ${text}\n`),
    });
    let interrupted!: () => void;
    const stop = new Promise<void>((resolve) => (interrupted = resolve));
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    let controls: Awaited<ReturnType<typeof serveControl>> | undefined;
    let keys: { close(): void } | undefined;
    let fork: Running | undefined;
    let ended = false;
    try {
      // In the try: a control port that cannot be had ends the replay too, with nothing left serving.
      if (values['control-port'] !== undefined) controls = await serveControl(replay.control, values['control-port']);
      keys = terminalKeys(replay.control, interrupted);
      const { forkAtPause, forkOnRequest, replayOutcome } = await import('../timetravel/replay/fork.js');
      const source = recording ?? values['data-dir']!;
      // serve is loaded before the replay closes: the clients held on the port through the switch wait no longer than the fork's start.
      const serve = values.fork === undefined ? undefined : (await import('../serve.js')).serve;
      const serveFork: ServeFork<Running> = (o) => serve!({ ...o, host: '127.0.0.1', eventTtlSeconds: 3600 });
      const forking =
        values.fork === undefined
          ? undefined
          : forkOnRequest(replay, { history, target: values.fork, source, isRecording: recording !== undefined, encryptionFile: values['encryption-provider-config'], logger, serve: serveFork });
      io.out.write(`serving ${replay.url}: the state at resourceVersion ${replay.initialVersion}, then entries ${replay.from}..${replay.to}\n`);
      if (controls) io.out.write(`controls at ${controls.url}: POST /pause, /resume, /step, /jump?to=RV${forking ? ', /fork' : ''}; GET /status\n`);
      if (forksAtPause) void forkAtPause(replay.control, () => ended || forking!.asked()).catch(() => undefined);
      let outcome = await replayOutcome(replay.done, stop, forking);
      if (outcome && 'report' in outcome) {
        io.out.write(formatReport(outcome.report) + '\n');
        // A replay that may be forked stays up at its end: the fork is still to be asked for.
        if (!values.keep && !forking) return 0;
        io.out.write(`serving the final state at ${replay.url} until interrupted${forking ? ' or forked' : ''}\n`);
        outcome = await Promise.race([stop.then(() => undefined), ...(forking ? [forking.serving.then((f) => ({ fork: f }))] : [])]);
        if (!outcome) return 0;
      }
      if (!outcome) return 130;
      fork = outcome.fork;
      io.out.write(`serving the fork ${values.fork} at ${fork.url}, writable: its history up to version ${replay.control.status().at} is the replay's\n`);
      await stop;
      return 0;
    } finally {
      ended = true;
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      keys?.close();
      await controls?.close();
      await replay.close();
      await fork?.close();
    }
  },
});

type ReplayValues = Values<typeof FLAGS>;

/**
 * The recording (or, undefined, the data folder) to replay, and whether only --pause-at can start its
 * fork: the flags that do not go together are refused, and so is a fork folder that holds something,
 * before anything is opened or served.
 */
async function checkedSource(values: ReplayValues, positionals: string[]): Promise<{ recording: string | undefined; forksAtPause: boolean }> {
  if (positionals[0] !== undefined && values.file !== undefined) throw new UsageError('give the recording once: as RECORDING or as --file');
  const recording = positionals[0] ?? values.file;
  // openHistory would name --server, which a replay does not read from.
  if ((recording === undefined) === (values['data-dir'] === undefined))
    throw new UsageError(`give exactly one source: a RECORDING (or --file) or --data-dir${recording === undefined ? '' : ', not both'}`);
  // Without a control port or a terminal, only a pause at --pause-at can start the fork.
  const forksAtPause = values.fork !== undefined && values['control-port'] === undefined && !process.stdin.isTTY;
  if (forksAtPause && values['pause-at'] === undefined) throw new UsageError('--fork is asked for on the control port or the terminal: give --control-port, or --pause-at to fork there');
  if (values.fork !== undefined) await (await import('../timetravel/fork/fork.js')).checkForkTarget(values.fork, '--fork');
  return { recording, forksAtPause };
}

/** The history replayed, open (a folder through a snapshot: a fork's source is never changed), and --pause-at as a version of it. */
async function openSource(values: ReplayValues, recording: string | undefined, io: Io): Promise<{ history: History; pauseAt: number | undefined }> {
  const history = await openHistory({ ...values, file: recording });
  try {
    return { history, pauseAt: values['pause-at'] && (await resolveNoted(history, '--pause-at', values['pause-at'], io)) };
  } catch (err) {
    await history.close();
    throw err;
  }
}
