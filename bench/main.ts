/**
 * npm run bench -- [scenario ...] [options]: runs the scenarios against an orchd child process (and
 * the ceilings, and etcd when asked), prints one table per scenario with the machine, and writes
 * JSON and an HTML report on request.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { BenchContext } from './context.js';
import { describeMachine, machineLine } from './machine.js';
import { parseOptions, usage } from './options.js';
import { defaultOrchdCli } from './orchd.js';
import { ensureEtcd, Etcd } from './peers/etcd.js';
import { renderHtmlReport } from './report-html.js';
import type { ScenarioResult } from './result.js';
import { runScenarios, type BenchRun } from './run.js';
import { renderTable } from './table.js';
import { targetsTable } from './targets.js';
import { runRemote } from './remote/scenarios.js';
import { BenchUsageError, connectionOf, discover } from './remote/server.js';

async function main(argv: string[]): Promise<void> {
  const opts = parseOptions(argv);
  if (opts === 'help') {
    process.stdout.write(usage);
    return;
  }
  const cli = defaultOrchdCli();
  const machine = describeMachine(resolve(dirname(cli), '../..'));
  const print = (s: string) => process.stdout.write(s + '\n');
  const log = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
  print(machineLine(machine) + '\n');
  const ctx: BenchContext = { opts, orchdCli: cli, log };
  if (opts.kubeconfigs.length > 0) {
    // Another server (or several), as their kubeconfigs say: who each is, and what it serves, first.
    const servers = [];
    for (const k of opts.kubeconfigs) {
      const s = await discover(connectionOf(k.file, k.context));
      log(`${s.context}: ${s.url}, ${s.version}, writes ${s.kind.apiVersion} ${s.kind.kind}s`);
      servers.push(s);
    }
    const results = await runRemote(ctx, servers);
    for (const r of results) for (const t of r.tables) print(renderTable(t) + '\n');
    print(machineLine(machine));
    await writeOutputs({ machine, command: `npm run bench -- ${argv.join(' ')}`, options: opts, results }, opts, log);
    return;
  }
  if (opts.compareEtcd) {
    const binary = ensureEtcd(log);
    ctx.etcd = await Etcd.start(binary);
    log(`etcd: ${ctx.etcd.version}, pid ${ctx.etcd.pid}`);
  }
  let results: ScenarioResult[];
  try {
    results = await runScenarios(ctx, print);
  } finally {
    await ctx.etcd?.stop();
  }
  const targets = results.flatMap((r) => r.targets);
  if (targets.length) print(renderTable(targetsTable(targets)) + '\n');
  print(machineLine(machine));
  const run: BenchRun = { machine, command: argv.length ? `npm run bench -- ${argv.join(' ')}` : 'npm run bench', options: opts, results, etcdVersion: ctx.etcd?.version };
  await writeOutputs(run, opts, log);
}

/** --json and --report, when asked for. */
async function writeOutputs(run: BenchRun, opts: { json?: string; report?: string }, log: (s: string) => void): Promise<void> {
  if (opts.json) {
    await mkdir(dirname(resolve(opts.json)), { recursive: true });
    await writeFile(opts.json, JSON.stringify(run, null, 2));
    log(`wrote ${opts.json}`);
  }
  if (opts.report) {
    await mkdir(dirname(resolve(opts.report)), { recursive: true });
    await writeFile(opts.report, renderHtmlReport(run));
    log(`wrote ${opts.report}`);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    // An operator's mistake (a file, a context, refused credentials) is one line; anything else keeps its stack.
    process.stderr.write(`bench: ${err instanceof BenchUsageError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
