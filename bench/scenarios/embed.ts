/**
 * embed: orchd inside the test process (startOrchd, src/embed.ts), as a controller's test suite uses it.
 *   start      startOrchd({ storage: 'memory' }) until a list answers 200 (the first test can run)
 *   reset      reset() after a test's writes, until it resolves
 *   suite      100 tests of a few writes and a list: a fresh orchd per test vs one shared with reset()
 *   memory     heap and RSS per running instance, idle
 *   cold       a fresh node process: the import of the built package, then the first start
 * Measured in this process (orchd is a library here), so the harness's own state is in the heap:
 * memory is the growth over a baseline taken just before, after a full collection, and first of all.
 * With --cpu-prof DIR, the in-process phases are profiled into DIR/embed-<pid>.cpuprofile.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { promisify } from 'node:util';
import { runInNewContext } from 'node:vm';
import { startOrchd, type Orchd } from '../../src/index.js';
import type { BenchContext, Scenario } from '../context.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { eventBytes, eventsPath } from '../payload.js';
import { col, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { summarize, type Summary } from '../stats.js';

/** Writes per test: a controller's test makes a handful of objects. */
const WRITES = 20;
const INSTANCES = 20;
const START_TARGET_MS = 50;
const RESET_TARGET_MS = 5;

/** One test's work: WRITES Events created, then one list of them. */
async function aTest(api: Orchd, t: number): Promise<void> {
  const http = new HttpClient(api.url, 4);
  try {
    await Promise.all(Array.from({ length: WRITES }, (_, i) => http.request('POST', eventsPath(), eventBytes(`t${t}-e${i}`, i), { keep: 0 }).then((r) => expectStatus(r, 201))));
    expectStatus(await http.request('GET', eventsPath(), undefined, { keep: 0 }), 200);
  } finally {
    http.close();
  }
}

/** startOrchd until a list answers: the time before a test can run. */
async function startToList(): Promise<{ ms: number; api: Orchd }> {
  const t0 = performance.now();
  const api = await startOrchd({ storage: 'memory' });
  const http = new HttpClient(api.url, 1);
  expectStatus(await http.request('GET', eventsPath(), undefined, { keep: 0 }), 200);
  const ms = performance.now() - t0;
  http.close();
  return { ms, api };
}

async function suite(tests: number, shared: boolean): Promise<number> {
  const t0 = performance.now();
  if (shared) {
    const { api } = await startToList();
    for (let t = 0; t < tests; t++) {
      await aTest(api, t);
      await api.reset();
    }
    await api.stop();
  } else {
    for (let t = 0; t < tests; t++) {
      const { api } = await startToList();
      await aTest(api, t);
      await api.stop();
    }
  }
  return performance.now() - t0;
}

const COLD_RUNS = 5;
const COLD_TARGET_MS = 300;

/**
 * The first start in a fresh process (a test runner's worker), from the package as a user installs
 * it: `npm pack` of this checkout, installed into a new project (npm's cache serves the dependencies),
 * then `node` importing 'orchd', startOrchd and a first list, each run a new process. Only from a
 * build (dist), which the pack holds.
 */
async function coldStarts(log: (s: string) => void): Promise<{ importMs: number; startMs: number; cpuMs: number }[]> {
  const root = new URL('../../', import.meta.url);
  if (!import.meta.url.endsWith('.js') || !existsSync(new URL('src/index.js', root))) return [];
  const checkout = fileURLToPath(new URL('../', root));
  const project = await mkdtemp(join(tmpdir(), 'orchd-embed-cold-'));
  try {
    log(`embed: npm pack and install into ${project}`);
    const npm = (args: string[]) => promisify(execFile)('npm', args, { cwd: project, timeout: 300_000 });
    const { stdout } = await npm(['pack', checkout, '--pack-destination', project, '--ignore-scripts', '--silent']);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'cold', private: true, type: 'module' }));
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(project, stdout.trim().split('\n').pop()!)]);
    const script = `const c0 = process.cpuUsage(); const t0 = performance.now();
const { startOrchd } = await import('orchd');
const t1 = performance.now();
const api = await startOrchd({ storage: 'memory' });
const { get } = await import('node:http');
const status = await new Promise((resolve, reject) => get(api.url + ${JSON.stringify(eventsPath())}, (res) => res.resume().on('end', () => resolve(res.statusCode))).on('error', reject));
if (status !== 200) throw new Error('list: ' + status);
const t2 = performance.now(); const c = process.cpuUsage(c0);
await api.stop();
process.stdout.write(JSON.stringify({ importMs: t1 - t0, startMs: t2 - t1, cpuMs: (c.user + c.system) / 1000 }));`;
    await writeFile(join(project, 'cold.mjs'), script);
    const out: { importMs: number; startMs: number; cpuMs: number }[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const { stdout: line } = await promisify(execFile)(process.execPath, [join(project, 'cold.mjs')], { cwd: project, timeout: 60_000 });
      out.push(JSON.parse(line));
    }
    return out;
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}

/** A full collection, through the flag the harness was not started with. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function perInstance(): Promise<{ heap: number; external: number; rss: number }> {
  const gc = collector();
  const settle = async () => {
    await new Promise((r) => setTimeout(r, 200));
    gc();
    gc();
    return process.memoryUsage();
  };
  // One start and stop first: what the first start sets up once per process is not an instance's.
  await (await startToList()).api.stop();
  const before = await settle();
  const running: Orchd[] = [];
  for (let i = 0; i < INSTANCES; i++) running.push((await startToList()).api);
  const after = await settle();
  for (const api of running) await api.stop();
  return {
    heap: (after.heapUsed - before.heapUsed) / INSTANCES,
    external: (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / INSTANCES,
    rss: (after.rss - before.rss) / INSTANCES,
  };
}

const summaryRow = (what: string, s: Summary, first?: number): Row => ({ what, n: s.count, first: first ?? null, p50: s.p50, p90: s.p90, max: s.max });

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const tests = ctx.opts.embedTests;
  const starts = Math.max(2, Math.ceil(tests / 2));
  const profile = ctx.opts.cpuProf ? new Session() : undefined;
  if (profile) {
    profile.connect();
    await profile.post('Profiler.enable');
    await profile.post('Profiler.start');
  }
  // First, while the heap holds nothing of the other phases (their garbage would blur the baseline).
  ctx.log(`embed: memory of ${INSTANCES} idle instances`);
  const mem = await perInstance();
  ctx.log(`embed: ${starts} starts to a first list`);
  const startMs: number[] = [];
  for (let i = 0; i < starts; i++) {
    const { ms, api } = await startToList();
    startMs.push(ms);
    await api.stop();
  }
  ctx.log(`embed: ${tests} resets after ${WRITES} writes each, and ${tests} with nothing to undo`);
  const api = await startOrchd({ storage: 'memory' });
  const resets: number[] = [];
  const emptyResets: number[] = [];
  for (let i = 0; i < tests; i++) {
    await aTest(api, i);
    let t0 = performance.now();
    await api.reset();
    resets.push(performance.now() - t0);
    t0 = performance.now();
    await api.reset();
    emptyResets.push(performance.now() - t0);
  }
  await api.stop();
  ctx.log(`embed: a suite of ${tests} tests, fresh orchd per test vs one shared with reset()`);
  const fresh = await suite(tests, false);
  const shared = await suite(tests, true);
  ctx.log(`embed: ${COLD_RUNS} first starts in a fresh node process`);
  const cold = await coldStarts(ctx.log);
  if (profile) {
    const { profile: cpu } = await profile.post('Profiler.stop');
    await mkdir(ctx.opts.cpuProf!, { recursive: true });
    const file = join(ctx.opts.cpuProf!, `embed-${process.pid}.cpuprofile`);
    await writeFile(file, JSON.stringify(cpu));
    profile.disconnect();
    ctx.log(`embed: wrote ${file}`);
  }

  const startS = summarize(startMs.slice(1));
  const resetS = summarize(resets);
  const timing = {
    title: 'embed: startOrchd and reset() in the test process (ms)',
    columns: [col('what', 'what', 'text'), col('n', 'runs', 'int'), col('first', 'first run', 'ms'), col('p50', 'p50', 'ms'), col('p90', 'p90', 'ms'), col('max', 'max', 'ms')],
    rows: [
      summaryRow("startOrchd({ storage: 'memory' }) → first list 200", startS, startMs[0]),
      summaryRow(`reset() after ${WRITES} creates`, resetS),
      summaryRow('reset() with nothing to undo', summarize(emptyResets)),
      ...(cold.length
        ? [
            summaryRow("fresh node process, packed install: import('orchd')", summarize(cold.map((c) => c.importMs))),
            summaryRow('fresh node process: then startOrchd → first list 200', summarize(cold.map((c) => c.startMs))),
            summaryRow('fresh node process: import + start + first list', summarize(cold.map((c) => c.importMs + c.startMs))),
            summaryRow('fresh node process: its CPU for all of it', summarize(cold.map((c) => c.cpuMs))),
          ]
        : []),
    ],
    notes: [
      "In the harness process, after the memory phase (which started instances already): \"first run\" is the first start of the table, p50/p90/max are over the later runs. The fresh-process rows (only from a build) are a test runner worker's first start: a new node process each run, importing orchd from an npm pack of this checkout installed into a new project, then the start and a first list (timed from inside the process: Node's own start is not counted). CPU: user + system of that process, which the machine's load distorts less than wall time.",
      `The list is GET ${eventsPath()} over node:http. reset() ends watches, deletes in one batch what was written since the start, and compacts the log to its end.`,
    ],
  };
  const suiteTable = {
    title: `embed: a suite of ${tests} tests (${WRITES} creates and a list each)`,
    columns: [col('how', 'how', 'text'), col('total', 'total (ms)', 'ms'), col('perTest', 'per test (ms)', 'ms')],
    rows: [
      { how: 'a fresh startOrchd per test (stop after)', total: fresh, perTest: fresh / tests },
      { how: 'one shared startOrchd, reset() after each test', total: shared, perTest: shared / tests },
    ],
    notes: ["Per test = total / tests; both include the tests' own writes and list."],
  };
  const memTable = {
    title: `embed: memory per idle instance (${INSTANCES} running)`,
    columns: [col('heap', 'JS heap', 'bytes'), col('external', 'external + array buffers', 'bytes'), col('rss', 'RSS', 'bytes')],
    rows: [mem],
    notes: [
      'Growth of process.memoryUsage() over a baseline after a full collection, divided by the instances; each instance holds its server, views and the objects written at start (system namespaces, bootstrap RBAC).',
    ],
  };
  const targets: TargetCheck[] = [
    {
      scenario: 'embed',
      name: "startOrchd({storage:'memory'}) to first successful list (p50)",
      target: `< ${START_TARGET_MS} ms`,
      measured: `${startS.p50.toFixed(1)} ms (p90 ${startS.p90.toFixed(1)}, first ${startMs[0].toFixed(1)})`,
      met: startS.p50 < START_TARGET_MS,
    },
    ...(cold.length
      ? [
          (() => {
            const total = summarize(cold.map((c) => c.importMs + c.startMs));
            return {
              scenario: 'embed',
              name: "fresh process: import('orchd') + startOrchd + first list (p50)",
              target: `< ${COLD_TARGET_MS} ms`,
              measured: `${total.p50.toFixed(0)} ms (CPU ${summarize(cold.map((c) => c.cpuMs)).p50.toFixed(0)} ms)`,
              met: total.p50 < COLD_TARGET_MS,
            };
          })(),
        ]
      : []),
    {
      scenario: 'embed',
      name: `reset() after ${WRITES} creates (p50)`,
      target: `< ${RESET_TARGET_MS} ms`,
      measured: `${resetS.p50.toFixed(2)} ms (p90 ${resetS.p90.toFixed(2)})`,
      met: resetS.p50 < RESET_TARGET_MS,
    },
  ];
  return { id: 'embed', title: embed.title, tables: [timing, suiteTable, memTable], plots: [], targets, elapsedMs: performance.now() - started };
}

export const embed: Scenario = { id: 'embed', title: 'orchd in the test process: start, reset, suites, memory', run };
