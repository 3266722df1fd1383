/**
 * `orchd replay --fork DIR`: a replay paused at the moment found by stepping becomes a writable
 * server on a fork, without starting over. Asked for with POST /fork on the control port or the f
 * key (or, when neither can be used, at --pause-at): the replay pauses, DIR is made a fork of the
 * replayed history at the version the replay has sent (../fork/fork.ts), the replay server closes (its
 * watches end with 410 Expired, so the clients' informers list again), and an orchd server (the
 * serve the command gives: writes, controllers, the whole API) serves DIR on the same port, which
 * stays listening through the switch: the connections made meanwhile wait for the fork's server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../../config/server-config.js';
import type { HandoverPort } from '../../http/handover-port.js';
import type { Logger } from '../../observability/logger.js';
import { type History } from '../core/history.js';
import { TimeTravelError } from '../core/errors.js';
import type { ReplayControl } from './control.js';
import type { ReplayReport } from './loop.js';
import type { Replaying } from './server.js';

/** How often the replay is looked at for its pause at --pause-at, when nothing else can ask for the fork. */
const POLL_MS = 50;

/** What serves the fork once it is made: a whole orchd server (src/serve.ts), given by the command, which is above this room. */
export interface ForkServer {
  url: string;
  close(): Promise<void>;
}

export type ServeFork<S extends ForkServer> = (opts: { port: number; handover: HandoverPort; dataDir: string; logger: Logger; config?: ServerConfig }) => Promise<S>;

export interface ReplayFork<S extends ForkServer> {
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
  serve: ServeFork<S>;
}

export interface Forking<S extends ForkServer> {
  /** Resolves with the fork's server once it serves; rejects if the fork failed. */
  serving: Promise<S>;
  /** Whether the fork was asked for (the replay then closes on purpose). */
  asked(): boolean;
}

/** Lets the replay be forked on request (control.fork); the fork's server, once it serves. */
export function forkOnRequest<S extends ForkServer>(replay: Replaying, f: ReplayFork<S>): Forking<S> {
  let forking: Promise<{ forked: string; at: number; url: string }> | undefined;
  let served!: (r: S) => void;
  let failed!: (err: unknown) => void;
  const serving = new Promise<S>((resolve, reject) => ((served = resolve), (failed = reject)));
  serving.catch(() => undefined);
  replay.control.fork = () =>
    (forking ??= (async () => {
      replay.control.pause();
      const at = replay.control.status().at;
      const port = Number(new URL(replay.url).port);
      try {
        const config = await configOf(f.encryptionFile);
        const { makeFork } = await import('../fork/fork.js');
        await makeFork({
          history: f.history,
          at,
          target: f.target,
          source: f.source,
          checkTo: f.isRecording ? f.history.head : at,
          encryption: config?.encryption?.value,
          // A data folder replayed is forked as `orchd fork --source-data-dir` forks it: sharing its tables.
          ...(f.isRecording ? {} : { sharedFrom: f.source }),
        });
        // From here the port holds new connections until the fork's server is ready: none is refused through the switch.
        const handover = replay.handOver();
        let running: S;
        try {
          // The clients' history is rewritten from here: each watch ends with 410 Expired, so their informers list the fork's state again (held until the fork serves it).
          replay.expireWatches(`the replay was forked at resourceVersion ${at}: list again`);
          // Closing the replay closes its history: the fork is made first.
          await replay.close();
          running = await f.serve({ port, handover, dataDir: f.target, logger: f.logger, ...(config ? { config } : {}) });
        } catch (err) {
          await handover.close();
          throw err;
        }
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
  const { loadServerConfig } = await import('../../config/server-config.js');
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
export async function replayOutcome<S extends ForkServer>(
  done: Promise<ReplayReport>,
  stopped: Promise<void>,
  forking: Forking<S> | undefined,
): Promise<{ report: ReplayReport } | { fork: S } | undefined> {
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
