/**
 * timetravel: the time-travel commands on a seeded log (--replay-entries, default 10k and 100k; the
 * targets are set at 1M). Each command is the built `orchd` run as a user runs it (node start-up
 * included), output to nowhere:
 *
 *   state --at the middle version, from the data folder and from the server;
 *   history of one object with 1,000 versions, from both;
 *   export of the whole log, entries per second;
 *   replay --speed max of that recording, events per second to 1 watcher and to each of 100.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Scenario } from '../context.js';
import { HttpClient } from '../http-client.js';
import { Orchd } from '../orchd.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents } from '../seed.js';
import { eventBytes, eventsPath } from '../payload.js';
import { startReplay } from '../../tools/replay.js';
import { readRecording } from '../../tools/timetravel/recording.js';

const TARGET_ENTRIES = 1_000_000;
const VERSIONS = 1000;
const HOT = 'tt-hot';
/** No command may run longer than this: the bound of every measurement here. */
const COMMAND_LIMIT_MS = 600_000;

/** Runs the built orchd with args, output discarded; its wall time in ms (fails on a non-zero exit). */
function timed(cli: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: COMMAND_LIMIT_MS });
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

/** Replays a recording at max speed to n watchers: events per second each (the slowest one). */
async function replayRate(ctx: BenchContext, file: string, n: number): Promise<number> {
  const rec = await readRecording(file);
  const events = rec.entries.filter((e) => e.key.startsWith('events.orch.io/')).length;
  const r = await startReplay({ recording: file, speed: 'max', watchers: n });
  try {
    const w = watchers(r.url, n, r.initialVersion, events);
    await w.opened;
    const times = await w.done.catch((err: Error) => err);
    await r.done;
    if (times instanceof Error) {
      ctx.log(`timetravel: replay to ${n} watchers: ${times.message}`);
      return NaN;
    }
    return (events * 1000) / Math.max(...times);
  } finally {
    await r.close();
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const rows: Row[] = [];
  const cli = ctx.orchdCli;
  for (const n of [...ctx.opts.replayEntries].sort((a, b) => a - b)) {
    const dataDir = await Orchd.newDataDir();
    const file = join(dataDir, 'bench.orchlog');
    try {
      ctx.log(`timetravel: writing ${n.toLocaleString('en-US')} log entries and ${VERSIONS} versions of one object`);
      await seedEvents(cli, dataDir, n);
      const { orchd, ready } = await Orchd.start({ cli, dataDir });
      let head: number;
      const row: Row = { entries: n };
      try {
        await hotObject(ready.url);
        const http = new HttpClient(ready.url, 1);
        head = Number(JSON.parse((await http.request('GET', '/api/v1/namespaces?limit=1')).body.toString()).metadata.resourceVersion);
        http.close();
        const mid = String(Math.floor(head / 2));
        ctx.log('timetravel: state and history from the server');
        row.stateServer = await timed(cli, ['state', '--server', ready.url, '--at', mid, '-o', 'json']);
        row.historyServer = await timed(cli, ['history', '--server', ready.url, `events/${HOT}`, '-n', 'default', '-o', 'json-patch']);
      } finally {
        await orchd.stop();
      }
      ctx.log('timetravel: state, history and export from the data folder');
      const mid = String(Math.floor(head / 2));
      row.stateDir = await timed(cli, ['state', '--data-dir', dataDir, '--at', mid, '-o', 'json']);
      row.historyDir = await timed(cli, ['history', '--data-dir', dataDir, `events/${HOT}`, '-n', 'default', '-o', 'json-patch']);
      const exportMs = await timed(cli, ['export', '--data-dir', dataDir, '--file', file]);
      row.exportRate = (head * 1000) / exportMs;
      ctx.log('timetravel: replay --speed max to 1 and 100 watchers');
      row.replay1 = await replayRate(ctx, file, 1);
      row.replay100 = await replayRate(ctx, file, 100);
      for (const k of ['stateServer', 'historyServer', 'stateDir', 'historyDir'] as const) row[k] = (row[k] as number) / 1000;
      rows.push(row);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const columns = [
    col('entries', 'seeded entries', 'int'),
    col('stateDir', 'state --at mid, data folder (s)', 'seconds'),
    col('stateServer', 'state --at mid, server (s)', 'seconds'),
    col('historyDir', `history of ${VERSIONS} versions, data folder (s)`, 'seconds'),
    col('historyServer', `history of ${VERSIONS} versions, server (s)`, 'seconds'),
    col('exportRate', 'export entries/s', 'rate'),
    col('replay1', 'replay max: events/s, 1 watcher', 'rate'),
    col('replay100', 'replay max: events/s each of 100', 'rate'),
  ];
  const notes = [
    'Each command is `node dist/src/cli.js <command>` with its output discarded: node start-up included. From a data folder, a command copies the log folder and rebuilds the store from its checkpoint and log before it answers (tools/timetravel/data-dir.ts), so its time grows with the log.',
    'replay: the export of the whole log replayed by tools/replay.ts in this process at --speed max; each watcher is a plain HTTP watch of every Event from the recording\'s start, timed until it has read all of them (the slowest watcher counts). No figure: the server closed a watcher that fell too far behind (the watchers share this process, and its cores, with the replay server).',
  ];
  const at = rows.find((r) => r.entries === TARGET_ENTRIES);
  const check = (name: string, target: string, key: string, ok: (v: number) => boolean, fmt: (v: number) => string): TargetCheck => ({
    scenario: 'timetravel',
    name,
    target,
    measured: at ? fmt(at[key] as number) : `not at 1M (use --replay-entries 1000000)`,
    met: at ? ok(at[key] as number) : null,
  });
  const targets: TargetCheck[] = [
    check('state --at the middle of a 1M-entry log (data folder)', '< 2 s', 'stateDir', (v) => v < 2, (v) => `${v.toFixed(2)} s`),
    check(`history of one object with ${VERSIONS} versions (data folder)`, '< 200 ms', 'historyDir', (v) => v < 0.2, (v) => `${(v * 1000).toFixed(0)} ms`),
    check('replay --speed max to one watcher', '≥ 100k events/s', 'replay1', (v) => v >= 100_000, (v) => `${Math.round(v)} events/s`),
    check('replay --speed max to each of 100 watchers', '≥ 50k events/s', 'replay100', (v) => v >= 50_000, (v) => `${Math.round(v)} events/s`),
    check('export of 1M entries', '≥ 200k entries/s', 'exportRate', (v) => v >= 200_000, (v) => `${Math.round(v)} entries/s`),
  ];
  return { id: 'timetravel', title: timetravel.title, tables: [{ title: 'timetravel: commands on a seeded log', columns, rows, notes }], plots: [], targets, elapsedMs: performance.now() - started };
}

export const timetravel: Scenario = { id: 'timetravel', title: 'Time travel: state, history, export and replay on a long log', run };
