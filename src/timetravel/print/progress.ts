/**
 * A progress bar for a command that runs longer than a second: what is done, its rate, and (when
 * the total is known) the time left, on stderr when stderr is a terminal. Nothing when it is not
 * (a script's log gets no bar), nothing for a command done within a second, and nothing when the
 * command's own output goes to the same terminal (the bar's redraws would be mixed into it).
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

/** A command quicker than this shows no bar. */
const SHOW_AFTER_MS = 1000;

const NONE: Progress = { update() {}, stop() {} };

export interface ProgressOptions {
  /** What is counted ("entries", "objects"). */
  unit?: string;
  /** Where the bar goes: stderr by default (the command's, in tests). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The command's output: a terminal there takes the bar's place. */
  out?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The clock the second before a bar shows and the rate are read on (ms); performance.now by default. */
  now?: () => number;
}

/** total: how many there are to do, undefined when it is not known (the bar then counts, without a time left). */
export function progress(total: number | undefined, label: string, opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const unit = opts.unit ?? 'entries';
  if (!stream.isTTY || opts.out?.isTTY || total === 0) return NONE;
  const clock = opts.now ?? (() => performance.now());
  const started = clock();
  let bar: cliProgress.SingleBar | undefined;
  const rate = (done: number, now: number) => Math.round((done * 1000) / Math.max(1, now - started));
  return {
    update(done) {
      const now = clock();
      if (!bar) {
        if (now - started < SHOW_AFTER_MS) return;
        const format =
          total === undefined
            ? `${label} {value} ${unit} | {rate} ${unit}/s | {duration_formatted}`
            : `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_formatted}`;
        // Only a terminal gets here: a WriteStream of a TTY, which cli-progress draws on.
        bar = new cliProgress.SingleBar({ stream: stream as NodeJS.WriteStream, format, hideCursor: true }, cliProgress.Presets.shades_classic);
        bar.start(total ?? 0, done, { rate: rate(done, now) });
        return;
      }
      bar.update(done, { rate: rate(done, now) });
    },
    stop() {
      bar?.stop();
    },
  };
}

/** The pages as they come, the bar told how many items have passed. */
export async function* counted<T>(pages: AsyncIterable<T[]>, bar: Progress): AsyncIterable<T[]> {
  let n = 0;
  for await (const page of pages) {
    n += page.length;
    bar.update(n);
    yield page;
  }
}
