/** Runs scenarios in order and collects what they measured; used by main.ts and by the smoke test. */
import type { BenchContext } from './context.js';
import type { Machine } from './machine.js';
import type { BenchOptions } from './options.js';
import type { ScenarioResult } from './result.js';
import { scenarios } from './scenarios/index.js';
import { renderTable } from './table.js';

export interface BenchRun {
  machine: Machine;
  command: string;
  options: BenchOptions;
  results: ScenarioResult[];
  etcdVersion?: string;
}

/** Runs the chosen scenarios in order; ctx.etcd must be started by the caller when comparing. */
export async function runScenarios(ctx: BenchContext, print: (text: string) => void): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const id of ctx.opts.scenarios) {
    const scenario = scenarios[id];
    if (!scenario) throw new Error(`scenario ${id} is not available`);
    ctx.log(`== ${id}: ${scenario.title}`);
    const result = await scenario.run(ctx);
    results.push(result);
    for (const t of result.tables) print(renderTable(t) + '\n');
  }
  return results;
}
