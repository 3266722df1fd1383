/**
 * timetravel: the time-travel commands on a seeded log (--replay-entries, default 10k and 100k; the
 * targets are set at 1M: --replay-entries 1000000). Each command is the built `orchd` run as a user
 * runs it (node start-up included), output to nowhere:
 *
 *   state --at the middle version, from the data folder and from the server;
 *   history of one object with 1,000 versions, from both;
 *   log of every entry and diff from the middle version to the head, from the data folder;
 *   export of the whole log, entries per second;
 *   replay --speed max of that recording, events per second to 1 watcher and to each of 100;
 *   fork of that recording at its head and serve it until ready, against a replay of it at max.
 *
 * The seeded data folder (its log, and the checkpoint a stopped server leaves) is built once per size
 * and kept in the temp folder (orchd-bench-timetravel-N): a million entries take minutes to write,
 * and the commands only read it. --before-cli runs every command of a row with another build's orchd
 * too (a worktree of the base commit), on the same folder, in the same sitting.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, Scenario } from '../context.js';
import { Child } from '../child.js';
import { HttpClient } from '../http-client.js';
import { freePort, Orchd } from '../orchd.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents } from '../seed.js';
import { eventBytes, eventsPath } from '../payload.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { forkVersusReplay } from '../timetravel-fork.js';

const TARGET_ENTRIES = 1_000_000;
const VERSIONS = 1000;
const HOT = 'tt-hot';
/** No command may run longer than this: the bound of every measurement here. */
const COMMAND_LIMIT_MS = 600_000;
/** The server the folder is served by keeps everything and expires nothing (the cache outlives an hour). */
const SERVE_ARGS = ['--history-retention', 'none'];
/** Bumped when what the cached folder holds changes. */
const CACHE_FORMAT = 1;

/** Runs the built orchd with args, output discarded; its wall time in ms (fails on a non-zero exit). */
function timed(ctx: BenchContext, cli: string, args: string[], label: string): Promise<number> {
  const prof = ctx.opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', ctx.opts.cpuProf, '--cpu-prof-name', `timetravel-${label}-${args[0]}-${Date.now()}.cpuprofile`] : [];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...prof, cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: COMMAND_LIMIT_MS });
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`orchd ${args[0]} exited ${code}: ${err.trim()}`))));
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

/** Opens n watches of every Event from version `after`; resolves with each one's ms until it saw `count` events. */
function watchers(url: string, n: number, after: number, count: number): { opened: Promise<void>; done: Promise<number[]> } {
  const opens: Promise<void>[] = [];
  const dones: Promise<number>[] = [];
  for (let i = 0; i < n; i++) {
    let opened!: () => void;
    opens.push(new Promise((r) => (opened = r)));
    dones.push(
      new Promise((resolve, reject) => {
        const started = performance.now();
        const req = request(`${url}/apis/events.orch.io/v1/events?watch=1&resourceVersion=${after}`, (res) => {
          opened();
          let seen = 0;
          res.on('data', (chunk: Buffer) => {
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) seen++;
            if (seen >= count) {
              resolve(performance.now() - started);
              req.destroy();
            }
          });
          // The server closes a watcher that falls too far behind (an ERROR event, then the end).
          res.on('end', () => reject(new Error(`a watch ended after ${seen} of ${count} events`)));
          res.on('error', () => undefined);
        });
        req.setTimeout(COMMAND_LIMIT_MS, () => req.destroy(new Error('watch timed out')));
        req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
        req.end();
      }),
    );
  }
  return { opened: Promise.all(opens).then(() => undefined), done: Promise.all(dones) };
}

/**
 * `orchd replay FILE --speed max --watchers n` as a user runs it (its own process): events per second
 * each of n watches of every Event saw (the slowest one), from the replay's start to its last event.
 */
async function replayRate(ctx: BenchContext, cli: string, file: string, n: number, events: number): Promise<number> {
  const port = await freePort();
  const child = Child.start('replay', process.execPath, [cli, 'replay', file, '--speed', 'max', '--port', String(port), '--watchers', String(n)]);
  try {
    const serving = await child.waitForLine((l) => l.startsWith('serving '), COMMAND_LIMIT_MS);
    const initial = Number(/resourceVersion (\d+)/.exec(serving)?.[1]);
    const w = watchers(`http://127.0.0.1:${port}`, n, initial, events);
    await w.opened;
    const times = await w.done.catch((err: Error) => err);
    if (times instanceof Error) {
      ctx.log(`timetravel: replay to ${n} watchers: ${times.message}`);
      return NaN;
    }
    await child.waitForLine((l) => l.startsWith('replayed '), COMMAND_LIMIT_MS);
    return (events * 1000) / Math.max(...times);
  } finally {
    await child.stop();
  }
}

/**
 * A measurement that may fail (a build that cannot do it at this size): its figure, or NaN with
 * why in the row's notes, so the rest of the row is still measured.
 */
async function attempt(ctx: BenchContext, row: Row, what: string, measure: () => Promise<number>): Promise<number> {
  try {
    return await measure();
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 200);
    ctx.log(`timetravel (${row.build}): ${what} failed: ${why}`);
    row.failed = `${row.failed ? `${row.failed}; ` : ''}${what}: ${why}`;
    return NaN;
  }
}

/** Every measurement of one row: the commands of one build on the cached folder of n entries (those --only names, if given). */
async function measure(ctx: BenchContext, cli: string, label: string, n: number, dataDir: string, built: Built): Promise<Row> {
  const row: Row = { build: label, entries: n };
  const mid = String(Math.floor(built.head / 2));
  const hot = [`events/${HOT}`, '-n', 'default', '-o', 'json-patch'];
  const wants = (what: string) => ctx.opts.only.length === 0 || ctx.opts.only.includes(what);
  const seconds = (what: string, args: string[], profile: string) => attempt(ctx, row, what, async () => (await timed(ctx, cli, args, profile)) / 1000);
  if (wants('state-server') || wants('history-server')) {
    const { orchd, ready } = await Orchd.start({ cli, dataDir, args: SERVE_ARGS, readyTimeoutMs: COMMAND_LIMIT_MS });
    try {
      ctx.log(`timetravel (${label}): state and history from the server`);
      if (wants('state-server')) row.stateServer = await seconds('state --server', ['state', '--server', ready.url, '--at', mid, '-o', 'json'], `${label}-server`);
      if (wants('history-server')) row.historyServer = await seconds('history --server', ['history', '--server', ready.url, ...hot], `${label}-server`);
    } finally {
      await orchd.stop();
    }
  }
  ctx.log(`timetravel (${label}): state, history, log, diff and export from the data folder`);
  if (wants('state')) row.stateDir = await seconds('state --data-dir', ['state', '--data-dir', dataDir, '--at', mid, '-o', 'json'], label);
  if (wants('history')) row.historyDir = await seconds('history --data-dir', ['history', '--data-dir', dataDir, ...hot], label);
  // The whole log as JSON lines, and what changed from the middle to the head as JSON patches: more text than one string may hold.
  if (wants('log')) row.logDir = await seconds('log --data-dir', ['log', '--data-dir', dataDir, '-o', 'json'], label);
  if (wants('diff')) row.diffDir = await seconds('diff --data-dir', ['diff', '--data-dir', dataDir, mid, String(built.head), '-o', 'json-patch'], label);
  if (!wants('export') && !wants('replay') && !wants('fork')) return row;
  const work = await Orchd.newDataDir();
  try {
    const file = join(work, 'bench.orchlog');
    row.exportRate = await attempt(ctx, row, 'export', async () => (built.head * 1000) / (await timed(ctx, cli, ['export', '--data-dir', dataDir, '--file', file], label)));
    if (Number.isNaN(row.exportRate)) return row;
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
    row.replay1 = await attempt(ctx, row, 'replay to 1', () => replayRate(ctx, cli, file, 1, built.events));
    row.replay100 = await attempt(ctx, row, 'replay to 100', () => replayRate(ctx, cli, file, 100, built.events));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return row;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const rows: Row[] = [];
  for (const n of [...ctx.opts.replayEntries].sort((a, b) => a - b)) {
    const { dataDir, built } = await cachedDataDir(ctx, n);
    if (ctx.opts.beforeCli) rows.push(await measure(ctx, ctx.opts.beforeCli, 'before', n, dataDir, built));
    rows.push(await measure(ctx, ctx.orchdCli, 'this', n, dataDir, built));
  }
  const columns = [
    col('build', 'build', 'text'),
    col('entries', 'seeded entries', 'int'),
    col('stateDir', 'state --at mid, data folder (s)', 'seconds'),
    col('stateServer', 'state --at mid, server (s)', 'seconds'),
    col('historyDir', `history of ${VERSIONS} versions, data folder (s)`, 'seconds'),
    col('historyServer', `history of ${VERSIONS} versions, server (s)`, 'seconds'),
    col('logDir', 'log of every entry -o json, data folder (s)', 'seconds'),
    col('diffDir', 'diff mid head -o json-patch, data folder (s)', 'seconds'),
    col('exportRate', 'export entries/s', 'rate'),
    col('replay1', 'replay max: events/s, 1 watcher', 'rate'),
    col('replay100', 'replay max: events/s each of 100', 'rate'),
    col('forkSeconds', 'fork at head (s)', 'seconds'),
    col('forkPeakMiB', 'fork peak RSS (MiB)', 'int'),
    col('forkReady', 'fork + serve ready (s)', 'seconds'),
    col('replayMax', 'replay max, no watcher (s)', 'seconds'),
    col('failed', 'failed (why)', 'text'),
  ];
  const notes = [
    'Each command is `node dist/src/cli.js <command>` with its output discarded: node start-up included. The data folder is the cached seeded one (see bench/scenarios/timetravel.ts); "before" rows are --before-cli on the same folder.',
    'replay: `orchd replay` of the export of the whole log at --speed max, in its own process; each watcher is a plain HTTP watch (in the harness) of every Event from the recording\'s start, timed until it has read all of them (the slowest watcher counts). No figure: the server closed a watcher that fell too far behind.',
    'fork: `orchd fork` of that recording at its head into a new folder (peak RSS: VmHWM polled every 50 ms), then `orchd serve` on it from spawn to its ready line; beside it `orchd replay` of the same recording at --speed max with no watcher, from spawn to its report (bench/timetravel-fork.ts).',
  ];
  const at = rows.find((r) => r.entries === TARGET_ENTRIES && r.build === 'this');
  const check = (name: string, target: string, key: string, ok: (v: number) => boolean, fmt: (v: number) => string): TargetCheck => ({
    scenario: 'timetravel',
    name,
    target,
    measured: !at ? `not at 1M (use --replay-entries 1000000)` : at[key] === undefined ? 'not measured (--only)' : fmt(at[key] as number),
    met: at && at[key] !== undefined ? ok(at[key] as number) : null,
  });
  const targets: TargetCheck[] = [
    check('state --at the middle of a 1M-entry log (data folder)', '< 2 s', 'stateDir', (v) => v < 2, (v) => `${v.toFixed(2)} s`),
    check(`history of one object with ${VERSIONS} versions (data folder)`, '< 200 ms', 'historyDir', (v) => v < 0.2, (v) => `${(v * 1000).toFixed(0)} ms`),
    check('replay --speed max to one watcher', '≥ 100k events/s', 'replay1', (v) => v >= 100_000, (v) => `${Math.round(v)} events/s`),
    check('replay --speed max to each of 100 watchers', '≥ 50k events/s', 'replay100', (v) => v >= 50_000, (v) => `${Math.round(v)} events/s`),
    check('export of 1M entries', '≥ 200k entries/s', 'exportRate', (v) => v >= 200_000, (v) => `${Math.round(v)} entries/s`),
    {
      scenario: 'timetravel',
      name: 'fork at the end of a 1M-entry recording, ready to serve',
      target: '< replay --speed max of it',
      measured: !at ? 'not at 1M (use --replay-entries 1000000)' : at.forkReady === undefined ? 'not measured (--only)' : `${(at.forkReady as number).toFixed(1)} s vs ${(at.replayMax as number).toFixed(1)} s`,
      met: at && at.forkReady !== undefined ? (at.forkReady as number) < (at.replayMax as number) : null,
    },
  ];
  return { id: 'timetravel', title: timetravel.title, tables: [{ title: 'timetravel: commands on a seeded log', columns, rows, notes }], plots: [], targets, elapsedMs: performance.now() - started };
}

export const timetravel: Scenario = { id: 'timetravel', title: 'Time travel: state, history, export and replay on a long log', run };
