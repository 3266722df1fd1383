/** A progress bar with entries/s and an ETA on a terminal (stderr); nothing when stderr is piped. */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

export function progress(total: number, label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY || total <= 0) return { update() {}, stop() {} };
  const started = performance.now();
  const bar = new cliProgress.SingleBar(
    { stream, format: `${label} [{bar}] {percentage}% | {value}/{total} entries | {rate} entries/s | ETA {eta_formatted}`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0 });
  return {
    update(done) {
      bar.update(done, { rate: Math.round((done * 1000) / Math.max(1, performance.now() - started)) });
    },
    stop() {
      bar.stop();
    },
  };
}
