/**
 * `orchd replay --fork DIR`: a replay paused at the moment found by stepping becomes a writable
 * server on a fork, without starting over. Asked for with POST /fork on the control port or the f
 * key (or, when neither can be used, at --pause-at): the replay pauses, DIR is made a fork of the
 * replayed history at the version the replay has sent (fork.ts), the replay server closes (its
 * watches end, and the clients' informers watch again from their last version), and an orchd
 * server (serve.ts: writes, controllers, the whole API) serves DIR on the same port.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../../src/config/server-config.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Running } from '../../src/serve.js';
import { TimeTravelError, type History } from './history.js';
import type { ReplayControl } from './replay-control.js';
import type { ReplayReport } from './replay-loop.js';
import type { Replaying } from './replay-server.js';

/** How often the replay is looked at for its pause at --pause-at, when nothing else can ask for the fork. */
const POLL_MS = 50;

export interface ReplayFork {
  /** The replay's history: the fork is made from it (not from the served copy), commit times and all. */
  history: History;
  target: string;
  /** The recording or data folder replayed, for fork.json. */
  source: string;
  /** A recording is read to its end, as `orchd fork` reads it: one damaged past the fork point is refused. */
  isRecording: boolean;
  /** The --encryption-provider-config the source was read with: the fork is sealed and served with it. */
  encryptionFile?: string;
  logger: Logger;
}

export interface Forking {
  /** Resolves with the fork's server once it serves; rejects if the fork failed. */
  serving: Promise<Running>;
  /** Whether the fork was asked for (the replay then closes on purpose). */
  asked(): boolean;
}

/** Lets the replay be forked on request (control.fork); the fork's server, once it serves. */
export function forkOnRequest(replay: Replaying, f: ReplayFork): Forking {
  let forking: Promise<{ forked: string; at: number; url: string }> | undefined;
  let served!: (r: Running) => void;
  let failed!: (err: unknown) => void;
  const serving = new Promise<Running>((resolve, reject) => ((served = resolve), (failed = reject)));
  serving.catch(() => undefined);
  replay.control.fork = () =>
    (forking ??= (async () => {
      replay.control.pause();
      const at = replay.control.status().at;
      const port = Number(new URL(replay.url).port);
      try {
        const config = await configOf(f.encryptionFile);
        const { makeFork } = await import('./fork.js');
        await makeFork({ history: f.history, at, target: f.target, source: f.source, checkTo: f.isRecording ? f.history.head : at, encryption: config?.encryption?.value });
        // Loaded first: the port stays closed from the replay's close to the fork's listen, which the clients wait out.
        const { serve } = await import('../../src/serve.js');
        // Closing the replay closes its history: the fork is made first.
        await replay.close();
        const running = await serve({ port, host: '127.0.0.1', dataDir: f.target, eventTtlSeconds: 3600, logger: f.logger, ...(config ? { config } : {}) });
        served(running);
        return { forked: f.target, at, url: running.url };
      } catch (err) {
        failed(err);
        throw err;
      }
    })());
  return { serving, asked: () => forking !== undefined };
}

async function configOf(file: string | undefined): Promise<ServerConfig | undefined> {
  if (file === undefined) return undefined;
  const { loadServerConfig } = await import('../../src/config/server-config.js');
  const loaded = loadServerConfig({ encryption: file });
  if (!loaded.ok) throw new TimeTravelError(`--encryption-provider-config ${file}: not valid`);
  return loaded.config;
}

/** Forks once the replay pauses at --pause-at: for a replay with no control port on no terminal, nothing else can ask. */
export async function forkAtPause(control: ReplayControl, isOver: () => boolean): Promise<void> {
  while (!control.status().paused) {
    if (isOver()) return;
    await sleep(POLL_MS);
  }
  await control.fork?.();
}

/**
 * How the replay ended: its report, the fork's server (a forked replay is closed on purpose, so its
 * end is not a failure), or undefined when stopped.
 */
export async function replayOutcome(done: Promise<ReplayReport>, stopped: Promise<void>, forking: Forking | undefined): Promise<{ report: ReplayReport } | { fork: Running } | undefined> {
  const ended = done.then(
    (report) => ({ report }),
    async (err: unknown) => {
      if (forking?.asked()) return { fork: await forking.serving };
      throw err;
    },
  );
  const forked = forking?.serving.then((fork) => ({ fork }));
  return Promise.race([ended, stopped.then(() => undefined), ...(forked ? [forked] : [])]);
}
