/**
 * timetravel: the time-travel commands on a seeded log (--replay-entries, default 10k and 100k; the
 * targets are set at 1M: --replay-entries 1000000). Each command is the built `orchd` run as a user
 * runs it (node start-up included), output to nowhere:
 *
 *   state --at the middle version, from the data folder and from the server;
 *   history of one object with 1,000 versions, from both;
 *   log of every entry and diff from the middle version to the head, from both;
 *   log --follow on a fresh server: from a write's answer to its line (timetravel-follow.ts);
 *   export of the whole log, entries per second;
 *   replay --speed max of that recording to 1 watcher and to 100, deliveries per second, beside its
 *   peer: a live server's catch-up watches of the same log from the same version (timetravel-watch.ts);
 *   fork of that recording at its head and serve it until ready, against a replay of it at max;
 *   start: `orchd --version` and `orchd history --help` from the bundle (dist/package/cli.js, as
 *   installed), the median of START_RUNS each, beside `node -e 0`.
 *
 * Each command's CPU seconds are taken beside its wall time: on a machine shared with other work,
 * they are what the load does not stretch.
 *
 * The seeded data folder (its log, and the checkpoint a stopped server leaves) is built once per size
 * and kept in the temp folder (orchd-bench-timetravel-N): a million entries take minutes to write,
 * and the commands only read it. --before-cli runs every command of a row with another build's orchd
 * too (a worktree of the base commit), on the same folder, in the same sitting.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BenchContext, Scenario } from '../context.js';
import { HttpClient } from '../http-client.js';
import { Orchd } from '../orchd.js';
import { cpuSeconds } from '../proc.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents } from '../seed.js';
import { eventBytes, eventsPath } from '../payload.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { forkFolderAt, forkVersusReplay } from '../timetravel-fork.js';
import { checkpointFigures } from '../timetravel-checkpoints.js';
import { followLatency } from '../timetravel-follow.js';
import { bareReplayRate, catchUpRate, replayRate, type WatchRate } from '../timetravel-watch.js';

const TARGET_ENTRIES = 1_000_000;
const VERSIONS = 1000;
/** Runs of each start-up measured (the median is kept): one run of ~100 ms is mostly the machine's noise. */
const START_RUNS = 7;
const HOT = 'tt-hot';
/** No command may run longer than this: the bound of every measurement here. */
const COMMAND_LIMIT_MS = 600_000;
/** The server the folder is served by keeps everything and expires nothing (the cache outlives an hour). */
const SERVE_ARGS = ['--history-retention', 'none'];
/** Bumped when what the cached folder holds changes. */
const CACHE_FORMAT = 1;
/** Writes timed through `log --follow` (after one that shows it follows). */
const FOLLOW_WRITES = 20;

/** The wall and CPU seconds of one command (its threads included; CPU read from procfs every 10 ms, so up to that much short). */
interface Timed {
  wall: number;
  cpu: number;
}

/** Runs the built orchd with args, output discarded; its times (fails on a non-zero exit). */
function timed(ctx: BenchContext, cli: string, args: string[], label: string): Promise<Timed> {
  const prof = ctx.opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', ctx.opts.cpuProf, '--cpu-prof-name', `timetravel-${label}-${args[0]}-${Date.now()}.cpuprofile`] : [];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...prof, cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: COMMAND_LIMIT_MS });
    let cpu = 0;
    const poll = setInterval(() => (cpu = (child.pid && cpuSeconds(child.pid)) || cpu), 10);
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(poll);
      // diff exits 1 when the two sides differ, as diff(1) does: what it is measured on.
      if (code === 0 || (args[0] === 'diff' && code === 1)) resolve({ wall: (performance.now() - started) / 1000, cpu });
      else reject(new Error(`orchd ${args[0]} exited ${code}: ${err.trim()}`));
    });
  });
}

/** One object written VERSIONS times: a create, then label patches. */
async function hotObject(url: string): Promise<void> {
  const http = new HttpClient(url, 1);
  try {
    const created = await http.request('POST', eventsPath(), eventBytes(HOT, 0));
    if (created.status !== 201) throw new Error(`create ${HOT}: ${created.status}`);
    for (let i = 1; i < VERSIONS; i++) {
      const body = Buffer.from(JSON.stringify({ metadata: { labels: { step: String(i) } } }));
      const r = await http.request('PATCH', `${eventsPath()}/${HOT}`, body, { contentType: 'application/merge-patch+json' });
      if (r.status !== 200) throw new Error(`patch ${HOT}: ${r.status}`);
    }
  } finally {
    http.close();
  }
}

interface Built {
  format: number;
  /** The log's newest version. */
  head: number;
  /** Its entries that are Events: what a watch of every Event from the start sees. */
  events: number;
}

/**
 * The seeded data folder of n entries, built on first use and kept (see the top of this file): the
 * entries, then VERSIONS writes of one object through a real server, which checkpoints as it stops.
 */
async function cachedDataDir(ctx: BenchContext, n: number): Promise<{ dataDir: string; built: Built }> {
  const dataDir = join(tmpdir(), `orchd-bench-timetravel-${n}`);
  const marker = join(dataDir, 'built.json');
  if (existsSync(marker)) {
    const built = JSON.parse(await readFile(marker, 'utf8')) as Built;
    if (built.format === CACHE_FORMAT) {
      ctx.log(`timetravel: the ${n.toLocaleString('en-US')}-entry log is cached in ${dataDir}`);
      return { dataDir, built };
    }
  }
  await rm(dataDir, { recursive: true, force: true });
  const building = `${dataDir}.building-${process.pid}`;
  await mkdir(building, { recursive: true });
  try {
    ctx.log(`timetravel: writing ${n.toLocaleString('en-US')} log entries and ${VERSIONS} versions of one object (kept in ${dataDir})`);
    await seedEvents(ctx.orchdCli, building, n);
    const { orchd, ready } = await Orchd.start({ cli: ctx.orchdCli, dataDir: building, args: SERVE_ARGS, readyTimeoutMs: COMMAND_LIMIT_MS });
    try {
      await hotObject(ready.url);
    } finally {
      await orchd.stop();
    }
    const log = new LevelDbLog({ path: join(building, 'log') });
    await log.open();
    const built: Built = { format: CACHE_FORMAT, head: log.lastSeq, events: 0 };
    try {
      for await (const page of log.read(0)) for (const e of page) if (e.key.startsWith('events.orch.io/')) built.events++;
    } finally {
      await log.close();
    }
    await writeFile(join(building, 'built.json'), JSON.stringify(built));
    await rename(building, dataDir);
    return { dataDir, built };
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    throw err;
  }
}

/**
 * A measurement that may fail (a build that cannot do it at this size): its figure, or undefined with
 * why in the row's notes, so the rest of the row is still measured.
 */
async function attempt<T>(ctx: BenchContext, row: Row, what: string, measure: () => Promise<T>): Promise<T | undefined> {
  try {
    return await measure();
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 200);
    ctx.log(`timetravel (${row.build}): ${what} failed: ${why}`);
    row.failed = `${row.failed ? `${row.failed}; ` : ''}${what}: ${why}`;
    return undefined;
  }
}

/** Every measurement of one row: the commands of one build on the cached folder of n entries (those --only names, if given). */
async function measure(ctx: BenchContext, cli: string, label: string, n: number, dataDir: string, built: Built): Promise<Row> {
  const row: Row = { build: label, entries: n };
  const mid = String(Math.floor(built.head / 2));
  const hot = [`events/${HOT}`, '-n', 'default', '-o', 'json-patch'];
  const wants = (what: string) => ctx.opts.only.length === 0 || ctx.opts.only.includes(what);
  /** A command's wall seconds into row[key], its CPU seconds into row[key + 'Cpu']. */
  const command = async (key: string, what: string, args: string[], profile: string) => {
    const t = await attempt(ctx, row, what, () => timed(ctx, cli, args, profile));
    row[key] = t?.wall ?? NaN;
    row[`${key}Cpu`] = t?.cpu ?? NaN;
    return t;
  };
  if (['state-server', 'history-server', 'log-server', 'diff-server'].some(wants)) {
    const { orchd, ready } = await Orchd.start({ cli, dataDir, args: SERVE_ARGS, readyTimeoutMs: COMMAND_LIMIT_MS });
    try {
      ctx.log(`timetravel (${label}): state, history, log and diff from the server`);
      if (wants('state-server')) await command('stateServer', 'state --server', ['state', '--server', ready.url, '--at', mid, '-o', 'json'], `${label}-server`);
      if (wants('history-server')) await command('historyServer', 'history --server', ['history', '--server', ready.url, ...hot], `${label}-server`);
      if (wants('log-server')) await command('logServer', 'log --server', ['log', '--server', ready.url, '-o', 'json'], `${label}-server`);
      if (wants('diff-server')) await command('diffServer', 'diff --server', ['diff', '--server', ready.url, mid, String(built.head), '-o', 'json-patch'], `${label}-server`);
    } finally {
      await orchd.stop();
    }
  }
  if (wants('start')) {
    // The bundle beside the build's dist/src/cli.js, as `npm install` runs it.
    const bundle = join(dirname(dirname(cli)), 'package', 'cli.js');
    ctx.log(`timetravel (${label}): start-up of ${bundle}, ${START_RUNS} runs each`);
    for (const [key, args] of [
      ['nodeStart', ['-e', '0']],
      ['startVersion', [bundle, '--version']],
      ['startHistoryHelp', [bundle, 'history', '--help']],
    ] as const) {
      const runs: Timed[] = [];
      for (let i = 0; i < START_RUNS; i++) {
        const t = await attempt(ctx, row, key, () => timed(ctx, args[0], args.slice(1), label));
        if (t) runs.push(t);
      }
      const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
      row[key] = median(runs.map((t) => t.wall * 1000));
      row[`${key}Cpu`] = median(runs.map((t) => t.cpu * 1000));
    }
  }
  ctx.log(`timetravel (${label}): state, history, log, diff and export from the data folder`);
  if (wants('state')) {
    await command('stateStart', 'state --data-dir at 1', ['state', '--data-dir', dataDir, '--at', '1', '-o', 'json'], label);
    await command('stateDir', 'state --data-dir', ['state', '--data-dir', dataDir, '--at', mid, '-o', 'json'], label);
    await command('stateHead', 'state --data-dir at the head', ['state', '--data-dir', dataDir, '--at', String(built.head), '-o', 'json'], label);
  }
  if (wants('checkpoints')) {
    ctx.log(`timetravel (${label}): checkpoints along the log: restarts and disk, on a copy of the folder`);
    const work = await Orchd.newDataDir();
    try {
      const f = await attempt(ctx, row, 'checkpoints', () => checkpointFigures(cli, dataDir, work, SERVE_ARGS, COMMAND_LIMIT_MS, HOT));
      if (f) {
        Object.assign(row, f);
        row.checkpointShare = (f.wholeBytes + f.alongBytes) / f.logBytes;
        row.alongShare = f.alongBytes / f.alongCount / f.logBytes;
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  if (wants('history')) await command('historyDir', 'history --data-dir', ['history', '--data-dir', dataDir, ...hot], label);
  // The whole log as JSON lines, and what changed from the middle to the head as JSON patches: more text than one string may hold.
  if (wants('log')) await command('logDir', 'log --data-dir', ['log', '--data-dir', dataDir, '-o', 'json'], label);
  if (wants('diff')) await command('diffDir', 'diff --data-dir', ['diff', '--data-dir', dataDir, mid, String(built.head), '-o', 'json-patch'], label);
  if (wants('follow')) {
    ctx.log(`timetravel (${label}): log --follow, a write to its line, over the server and its data folder`);
    for (const from of ['server', 'data-dir'] as const) {
      const f = await attempt(ctx, row, `follow --${from}`, () => followLatency(cli, FOLLOW_WRITES, from));
      row[`follow-${from}`] = f?.p50Ms ?? NaN;
      row[`follow-${from}-max`] = f?.maxMs ?? NaN;
    }
  }
  if (wants('catch-up')) {
    // The peer of the replay rows: the live server's catch-up watches of the same log, from version 1 as the replay's.
    ctx.log(`timetravel (${label}): the live server's catch-up watches from version 1, 1 and 100 watchers`);
    for (const w of [1, 100]) watchRow(row, `catchUp${w}`, await attempt(ctx, row, `catch-up to ${w}`, () => catchUpRate(ctx, cli, dataDir, SERVE_ARGS, w, 1, built.events)));
  }
  if (wants('fork-folder')) await forkFolderRow(ctx, row, cli, dataDir, built);
  if (!wants('export') && !wants('replay') && !wants('fork')) return row;
  const work = await Orchd.newDataDir();
  try {
    const file = join(work, 'bench.orchlog');
    const t = await command('export', 'export', ['export', '--data-dir', dataDir, '--file', file], label);
    row.exportRate = t ? built.head / t.wall : NaN;
    row.exportCpuRate = t ? built.head / t.cpu : NaN;
    if (!t) return row;
    if (wants('fork')) {
      ctx.log(`timetravel (${label}): fork at the head and serve it, against replay --speed max`);
      await attempt(ctx, row, 'fork', async () => {
        const f = await forkVersusReplay(cli, file, work, COMMAND_LIMIT_MS);
        Object.assign(row, { forkSeconds: f.forkSeconds, forkPeakMiB: f.forkPeakMiB, forkReady: f.forkSeconds + f.serveSeconds, replayMax: f.replaySeconds });
        return f.forkSeconds;
      });
    }
    if (!wants('replay')) return row;
    ctx.log(`timetravel (${label}): replay --speed max to 1 and 100 watchers`);
    for (const w of [1, 100]) {
      watchRow(row, `replay${w}`, await attempt(ctx, row, `replay to ${w}`, () => replayRate(ctx, cli, file, w, built.events)));
      watchRow(row, `bare${w}`, await attempt(ctx, row, `bare replay peer to ${w}`, () => bareReplayRate(ctx, file, w, built.events)));
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return row;
}

/** Forks of the data folder at its start, middle and head (bench/timetravel-fork.ts), each served to ready. */
async function forkFolderRow(ctx: BenchContext, row: Row, cli: string, dataDir: string, built: Built): Promise<void> {
  ctx.log(`timetravel (${row.build}): fork --source-data-dir at the start, the middle and the head, each served to ready`);
  const work = await Orchd.newDataDir();
  try {
    const figures = await attempt(ctx, row, 'fork-folder', () => forkFolderAt(cli, dataDir, [1, Math.floor(built.head / 2), built.head], work, COMMAND_LIMIT_MS));
    for (const [i, where] of ['Start', 'Mid', 'Head'].entries()) {
      const f = figures?.[i];
      row[`forkFolder${where}`] = f?.forkSeconds ?? NaN;
      row[`serveFolder${where}`] = f?.serveSeconds ?? NaN;
      if (f)
        ctx.log(
          `timetravel (${row.build}): fork at ${f.at}: ${f.forkSeconds.toFixed(2)} s (peak ${f.forkPeakMiB.toFixed(0)} MiB), serve to ready ${f.serveSeconds.toFixed(2)} s (${f.replayMs} ms of it replaying)`,
        );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A watch measurement into the row: events/s each, deliveries/s in all, and deliveries per second of the server's CPU. */
function watchRow(row: Row, key: string, r: WatchRate | undefined): void {
  row[key] = r?.eachPerSecond ?? NaN;
  row[`${key}All`] = r?.deliveriesPerSecond ?? NaN;
  row[`${key}CpuRate`] = r ? r.deliveries / r.cpuSeconds : NaN;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const rows: Row[] = [];
  for (const n of [...ctx.opts.replayEntries].sort((a, b) => a - b)) {
    const { dataDir, built } = await cachedDataDir(ctx, n);
    if (ctx.opts.beforeCli) rows.push(await measure(ctx, ctx.opts.beforeCli, 'before', n, dataDir, built));
    rows.push(await measure(ctx, ctx.orchdCli, 'this', n, dataDir, built));
  }
  const seconds = (key: string, title: string) => [col(key, `${title} (s)`, 'seconds'), col(`${key}Cpu`, 'CPU (s)', 'seconds')];
  const commands = [
    col('build', 'build', 'text'),
    col('entries', 'seeded entries', 'int'),
    ...seconds('stateStart', 'state --at 1, data folder'),
    ...seconds('stateDir', 'state --at mid, data folder'),
    ...seconds('stateHead', 'state --at head, data folder'),
    ...seconds('stateServer', 'state --at mid, server'),
    ...seconds('historyDir', `history of ${VERSIONS} versions, data folder`),
    ...seconds('historyServer', `history of ${VERSIONS} versions, server`),
    ...seconds('logDir', 'log of every entry -o json, data folder'),
    ...seconds('logServer', 'log of every entry -o json, server'),
    ...seconds('diffDir', 'diff mid head -o json-patch, data folder'),
    ...seconds('diffServer', 'diff mid head -o json-patch, server'),
    col('follow-server', `log --follow, server: write to line p50 (ms, ${FOLLOW_WRITES} writes)`, 'ms'),
    col('follow-server-max', 'max (ms)', 'ms'),
    col('follow-data-dir', 'log --follow, data folder: p50 (ms)', 'ms'),
    col('follow-data-dir-max', 'max (ms)', 'ms'),
    col('exportRate', 'export entries/s', 'rate'),
    col('exportCpuRate', 'export entries per CPU-second', 'rate'),
    col('forkSeconds', 'fork at head (s)', 'seconds'),
    col('forkPeakMiB', 'fork peak RSS (MiB)', 'int'),
    col('forkReady', 'fork + serve ready (s)', 'seconds'),
    col('replayMax', 'replay max, no watcher (s)', 'seconds'),
    ...(['Start', 'Mid', 'Head'] as const).flatMap((w) => [
      col(`forkFolder${w}`, `fork --source-data-dir at ${w.toLowerCase()} (s)`, 'seconds'),
      col(`serveFolder${w}`, 'serve it to ready (s)', 'seconds'),
    ]),
    col('nodeStart', 'node -e 0 (ms)', 'ms'),
    col('nodeStartCpu', 'CPU (ms)', 'ms'),
    col('startVersion', 'orchd --version, bundle (ms)', 'ms'),
    col('startVersionCpu', 'CPU (ms)', 'ms'),
    col('startHistoryHelp', 'orchd history --help, bundle (ms)', 'ms'),
    col('startHistoryHelpCpu', 'CPU (ms)', 'ms'),
    col('failed', 'failed (why)', 'text'),
  ];
  const along = [
    col('build', 'build', 'text'),
    col('entries', 'seeded entries', 'int'),
    col('restartAll', 'restart to ready, every checkpoint (s)', 'seconds'),
    col('restartNewestDeleted', 'newest deleted: from the older copy (s)', 'seconds'),
    col('restartNone', 'no checkpoint: the whole log folded (s)', 'seconds'),
    col('olderSeq', 'older copy at', 'int'),
    col('newestSeq', 'newest at', 'int'),
    col('logBytes', "log's own files", 'bytes'),
    col('wholeBytes', 'whole checkpoint', 'bytes'),
    col('alongCount', 'copies along the log', 'int'),
    col('alongBytes', 'copies', 'bytes'),
    col('alongShare', 'one copy / log', 'ratio'),
    col('checkpointShare', 'all checkpoints / log', 'ratio'),
  ];
  const watches = [
    col('build', 'build', 'text'),
    col('entries', 'seeded entries', 'int'),
    ...[1, 100].flatMap((w) => [
      col(`replay${w}All`, `replay max to ${w}: deliveries/s in all`, 'rate'),
      col(`replay${w}CpuRate`, 'per replay CPU-second', 'rate'),
      col(`bare${w}All`, `bare peer to ${w}: deliveries/s in all`, 'rate'),
      col(`catchUp${w}All`, `peer: live catch-up of ${w}, deliveries/s in all`, 'rate'),
      col(`catchUp${w}CpuRate`, 'per server CPU-second', 'rate'),
    ]),
  ];
  const notes = [
    'Each command is `node dist/src/cli.js <command>` with its output discarded: node start-up included. CPU is the process\'s, all its threads, read from procfs (every 10 ms, so up to that much short): on a loaded machine it is the figure the load does not stretch. The data folder is the cached seeded one (see bench/scenarios/timetravel.ts); "before" rows are --before-cli on the same folder.',
    'fork: `orchd fork` of that recording at its head into a new folder (peak RSS: VmHWM polled every 50 ms), then `orchd serve` on it from spawn to its ready line; beside it `orchd replay` of the same recording at --speed max with no watcher, from spawn to its report (bench/timetravel-fork.ts).',
  ];
  const watchNotes = [
    "replay: `orchd replay` of the export of the whole log at --speed max, in its own process; each watcher is a plain HTTP watch (in the harness) of every Event from the recording's start (version 1), timed until it has read all of them (the slowest watcher counts). bare peer: the same recording read by a plain node:http server that writes each page's Events, transcoded once by the replay's transcoder, to every watch (bench/peers/replay-fanout.ts), measured right after the replay by the same watchers. peer: a live `orchd serve` on the same data folder, the same watches from version 1, which it serves by catching up from its log. CPU: the serving process's over the watches. No figure: the server closed a watcher that fell too far behind (see failed).",
  ];
  const at = rows.find((r) => r.entries === TARGET_ENTRIES && r.build === 'this');
  const check = (name: string, target: string, key: string, ok: (v: number) => boolean, fmt: (v: number) => string): TargetCheck => ({
    scenario: 'timetravel',
    name,
    target,
    measured: !at ? `not at 1M (use --replay-entries 1000000)` : at[key] === undefined ? 'not measured (--only)' : fmt(at[key] as number),
    met: at && at[key] !== undefined ? ok(at[key] as number) : null,
  });
  // The server's answers against the folder's (issue 31 item 9), on the largest log measured.
  const largest = rows.filter((r) => r.build === 'this').at(-1);
  const twice = (what: string, server: string, folder: string): TargetCheck => {
    const [a, b] = [largest?.[server], largest?.[folder]] as (number | undefined)[];
    const measured = a !== undefined && b !== undefined && !Number.isNaN(a) && !Number.isNaN(b);
    return {
      scenario: 'timetravel',
      name: `${what} over --server, against the data folder (${largest?.entries ?? '–'} entries)`,
      target: '≤ 2× the folder',
      measured: measured ? `${a.toFixed(2)} s vs ${b.toFixed(2)} s` : 'not measured (--only)',
      met: measured ? a <= 2 * b : null,
    };
  };
  const follow = largest?.['follow-server-max'] as number | undefined;
  const targets: TargetCheck[] = [
    twice('state --at mid', 'stateServer', 'stateDir'),
    twice('history of one object', 'historyServer', 'historyDir'),
    twice('log of every entry', 'logServer', 'logDir'),
    twice('diff mid head', 'diffServer', 'diffDir'),
    {
      scenario: 'timetravel',
      name: 'log --follow --server: a write to its line, the slowest',
      target: '< 1 s',
      measured: follow === undefined || Number.isNaN(follow) ? 'not measured (--only)' : `${Math.round(follow)} ms`,
      met: follow === undefined || Number.isNaN(follow) ? null : follow < 1000,
    },
    check(
      'state --at the middle of a 1M-entry log (data folder)',
      '< 2 s',
      'stateDir',
      (v) => v < 2,
      (v) => `${v.toFixed(2)} s`,
    ),
    check(
      `history of one object with ${VERSIONS} versions (data folder)`,
      '< 250 ms',
      'historyDir',
      (v) => v < 0.25,
      (v) => `${(v * 1000).toFixed(0)} ms`,
    ),
    check(
      'export of 1M entries',
      '≥ 200k entries/s',
      'exportRate',
      (v) => v >= 200_000,
      (v) => `${Math.round(v)} entries/s`,
    ),
    {
      scenario: 'timetravel',
      name: 'fork at the end of a 1M-entry recording, ready to serve',
      target: '< replay --speed max of it',
      measured: !at
        ? 'not at 1M (use --replay-entries 1000000)'
        : at.forkReady === undefined
          ? 'not measured (--only)'
          : `${(at.forkReady as number).toFixed(1)} s vs ${(at.replayMax as number).toFixed(1)} s`,
      met: at && at.forkReady !== undefined ? (at.forkReady as number) < (at.replayMax as number) : null,
    },
    check(
      'replay --speed max to one watcher',
      '≥ 100k events/s',
      'replay1All',
      (v) => v >= 100_000,
      (v) => `${Math.round(v)} events/s`,
    ),
    check(
      'replay --speed max to 100 watchers, against the bare peer of the same run',
      '≥ 0.8× the bare peer',
      'replay100All',
      (v) => v >= 0.8 * (at?.bare100All as number),
      (v) => `${Math.round(v)} vs ${Math.round(at?.bare100All as number)} deliveries/s (${(v / (at?.bare100All as number)).toFixed(2)}×)`,
    ),
  ];
  const tables = [
    { title: 'timetravel: commands on a seeded log', columns: commands, rows, notes },
    { title: 'timetravel: replay and its peer, a live catch-up watch', columns: watches, rows, notes: watchNotes },
    {
      title: 'timetravel: checkpoints along the log',
      columns: along,
      rows: rows.filter((r) => r.restartAll !== undefined),
      notes: [
        `On a copy of the seeded folder, after two stops of \`orchd serve\` with ${500} writes between them (bench/timetravel-checkpoints.ts). Restart: from spawn to the ready line. "newest deleted": the whole checkpoint and its index copy removed, so the server starts from the older copy (its objects read from the log by revision) and folds the writes after it. Disk: file sizes; the log's own files are LevelDB's (its version index rows included).`,
      ],
    },
  ];
  return { id: 'timetravel', title: timetravel.title, tables, plots: [], targets, elapsedMs: performance.now() - started };
}

export const timetravel: Scenario = { id: 'timetravel', title: 'Time travel: state, history, export and replay on a long log', run };
