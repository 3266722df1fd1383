/**
 * The embed benchmark scenario, tiny, in this process: the shape of what it reports (tables, rows,
 * targets), never its speed.
 */
import { describe, expect, it } from 'vitest';
import type { BenchContext } from '../../bench/context.js';
import { parseOptions, type BenchOptions } from '../../bench/options.js';
import { runScenarios } from '../../bench/run.js';

describe('a tiny embed run', () => {
  it('measures starts, resets, both suites and memory per instance, and checks both targets', async () => {
    const opts = parseOptions(['embed', '--embed-tests', '3']) as BenchOptions;
    expect(opts.scenarios).toEqual(['embed']);
    expect(opts.embedTests).toBe(3);
    const ctx: BenchContext = { opts, orchdCli: 'unused: embed runs orchd in process', log: () => undefined };
    const [result] = await runScenarios(ctx, () => undefined);
    const [timing, suites, memory] = result.tables;
    expect(timing.rows.map((r) => r.n)).toEqual([1, 3, 3]);
    for (const r of timing.rows) expect(r.p50).toBeGreaterThan(0);
    expect(suites.rows.map((r) => r.how)).toEqual(['a fresh startOrchd per test (stop after)', 'one shared startOrchd, reset() after each test']);
    for (const r of suites.rows) expect(r.total).toBeCloseTo((r.perTest as number) * 3, 6);
    // Twenty running servers hold more than nothing.
    expect(memory.rows[0].heap).toBeGreaterThan(0);
    expect(result.targets.map((t) => t.name)).toEqual(["startOrchd({storage:'memory'}) to first successful list (p50)", 'reset() after 20 creates (p50)']);
    for (const t of result.targets) expect(typeof t.met).toBe('boolean');
  });
});
