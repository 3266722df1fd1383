/**
 * Catch-up watches (issue 18, item 3): ten watches, each replaying ~60 MB of history from an old
 * resourceVersion, started beside live watchers and a writer. What they cost the server (RSS added
 * over the RSS before they started, sampled every 100 ms) and the live watchers (delivery p99,
 * against the same cell without them, on the same history). A catching-up watcher is sent one page
 * of the log at a time, as its socket drains, so the added memory should be about pages and socket
 * buffers, not the replayed bytes.
 *
 * The history is seeded into a data folder (bench/seed.ts: Events appended through orchd's own log)
 * before either cell; the catch-up watchers read as fast as they can, in one child process
 * (bench/watch-client.ts) apart from the live watchers' processes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.js';
import { startOrchd, type BenchContext } from './context.js';
import { eventsPath } from './payload.js';
import { memory } from './proc.js';
import { seedEvents } from './seed.js';
import { benchScript, eventsVersion, fanoutCell, watchPathFor, type FanoutCell } from './watch-fanout.js';
import type { WatchClientConfig, WatchClientResult } from './watch-client.js';

/** Issue 18's targets: added server memory, and the live watchers' p99 against the run without catch-ups. */
export const CATCH_UP = { watches: 10, addedBytes: 100 * 2 ** 20, p99Growth: 1.2 };
/** Live watchers beside them (broadcast, chunked HTTP). */
const LIVE_WATCHERS = 100;
/** A seeded Event's watch line, bytes (an ADDED event of bench/payload.ts's ~1 KB Event, as orchd stores it). */
const EVENT_LINE_BYTES = 1678;
/** The cells run at least this long per MB of history after the warm-up, so the catch-ups have time to finish (~100 s for 10 × 60 MB on 2 loaded cores). */
const MS_PER_MB = 2000;
const RSS_EVERY_MS = 100;

export interface CatchUpCell {
  /** Catch-up watches in the cell: none, one (what a single one adds), or CATCH_UP.watches. */
  watches: number;
  live: FanoutCell;
  /** Server RSS when the catch-ups started (or would have), bytes. */
  rssBefore: number;
  /** Highest server RSS sampled from then to the end of the drain, bytes. */
  rssMax: number;
  /** Bytes each catch-up watch read, on average. */
  bytesPerWatch: number;
  /** From their start until together they had read every replayed event, ms (NaN: not within the cell). */
  catchUpMs: number;
}

/** The cells, on one seeded history: without catch-ups, with one, then with ten. */
export async function catchUpCells(ctx: BenchContext, historyMb: number): Promise<CatchUpCell[]> {
  const count = Math.ceil((historyMb * 2 ** 20) / EVENT_LINE_BYTES);
  const dataDir = await mkdtemp(join(tmpdir(), 'orchd-bench-catchup-'));
  try {
    ctx.log(`watch: catch-up, seeding ${count} Events (~${historyMb} MB of watch events)`);
    await seedEvents(ctx.orchdCli, dataDir, count);
    const cells: CatchUpCell[] = [];
    for (const watches of [0, 1, CATCH_UP.watches]) cells.push(await catchUpCell(ctx, dataDir, watches, count));
    return cells;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function catchUpCell(ctx: BenchContext, dataDir: string, watches: number, history: number): Promise<CatchUpCell> {
  const { orchd, ready } = await startOrchd(ctx, dataDir);
  const pid = orchd.pid;
  let rssBefore = NaN;
  let rssMax = 0;
  let caughtAt = NaN;
  let started = 0;
  let results: WatchClientResult | undefined;
  const alongside = async () => {
    rssBefore = memory(pid)?.rss ?? NaN;
    rssMax = rssBefore;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, memory(pid)?.rss ?? 0)), RSS_EVERY_MS);
    const client = watches > 0 ? await catchUpClient(ctx, ready.url, watches, history, (at) => (caughtAt = at)) : undefined;
    started = Date.now();
    let stopped = false;
    return {
      async stop() {
        if (stopped) return;
        stopped = true;
        clearInterval(sampler);
        if (!client) return;
        try {
          const line = client.waitForLine((l) => l.startsWith('{"msg":"result"'), 30_000);
          process.kill(client.pid, 'SIGUSR2');
          results = JSON.parse(await line) as WatchClientResult;
        } finally {
          await client.stop('SIGKILL', 1000);
        }
      },
    };
  };
  try {
    const durationMs = Math.max(ctx.opts.durationMs, ctx.opts.watchCatchUpMb * MS_PER_MB);
    const live = await fanoutCell({ ...ctx, opts: { ...ctx.opts, durationMs } }, liveServer(ready.url, pid), 'broadcast', LIVE_WATCHERS, 'http', { alongside });
    return { watches, live, rssBefore, rssMax, bytesPerWatch: results ? results.bytes / watches : 0, catchUpMs: caughtAt - started };
  } finally {
    await orchd.dispose();
  }
}

/** The live side: orchd's broadcast watch of `default` Events from its current resourceVersion. */
function liveServer(url: string, pid: number) {
  return {
    system: 'orchd' as const,
    url,
    pid,
    async prepare() {
      const rv = await eventsVersion(url);
      return { watchPath: (k: number) => watchPathFor('broadcast', k, rv) };
    },
  };
}

/**
 * The catch-up watches, in one child process, all from resourceVersion 1: every seeded Event is
 * replayed to each. `onCaughtUp` gets the epoch ms at which they had read them all together.
 */
async function catchUpClient(ctx: BenchContext, url: string, watches: number, history: number, onCaughtUp: (at: number) => void) {
  const dir = await mkdtemp(join(tmpdir(), 'orchd-bench-catchup-client-'));
  const { hostname, port } = new URL(url);
  const cfg: WatchClientConfig = {
    host: hostname,
    port: Number(port),
    paths: Array.from({ length: watches }, () => `${eventsPath()}?watch=1&resourceVersion=1`),
    transport: 'http',
    marker: '"name":"no-sample-',
    sampleEvery: 1,
    stopAt: Date.now() + 600_000,
    caughtUpAt: history * watches,
  };
  const file = join(dir, 'catch-up.json');
  await writeFile(file, JSON.stringify(cfg));
  const child = Child.start('catch-up', process.execPath, [benchScript(ctx, 'watch-client.js'), file]);
  child
    .waitForLine((l) => l.includes('"msg":"caught up"'), 600_000)
    .then(
      (l) => onCaughtUp((JSON.parse(l) as { at: number }).at),
      () => undefined,
    );
  // The child has read its configuration once it says it is ready.
  await child.waitForLine((l) => l.includes('"msg":"ready"'), 60_000).finally(() => rm(dir, { recursive: true, force: true }));
  return child;
}
