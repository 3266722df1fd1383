/**
 * The cel-spec conformance data against our environment (the library plus what we add on top).
 * Every case runs, except the sections and cases named in conformance-skips.ts with their reasons;
 * a listed case that starts passing fails this test too, so the list stays true.
 */
import { describe, expect, test } from 'vitest';
import { allCases, runCase } from './conformance-runner.js';
import { SKIPPED_CASES, SKIPPED_SECTIONS } from './conformance-skips.js';

const cases = allCases();
const skipped = new Map<string, string>();
for (const g of SKIPPED_CASES) for (const c of g.cases) skipped.set(c, g.reason);

describe('cel-spec conformance', () => {
  test('every case outside the skip list passes', () => {
    const failures: string[] = [];
    let passed = 0;
    for (const c of cases) {
      if (Object.hasOwn(SKIPPED_SECTIONS, c.section) || skipped.has(c.name)) continue;
      const r = runCase(c);
      if (r.ok) passed++;
      else failures.push(`${c.name}: ${r.why}`);
    }
    expect(failures).toEqual([]);
    // The sections we support are not empty: the run really ran.
    expect(passed).toBeGreaterThan(1000);
  });

  test('every listed case still fails (remove it from the list when it passes)', () => {
    const known = new Set(cases.map((c) => c.name));
    const stale = [...skipped.keys()].filter((n) => !known.has(n) || runCase(cases.find((c) => c.name === n)!).ok);
    expect(stale).toEqual([]);
  });

  test('every skipped section exists in the data', () => {
    const sections = new Set(cases.map((c) => c.section));
    expect(Object.keys(SKIPPED_SECTIONS).filter((s) => !sections.has(s))).toEqual([]);
  });
});
