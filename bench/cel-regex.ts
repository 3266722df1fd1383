/**
 * What a hostile expression costs one admission evaluation, in process: patterns that backtrack
 * exponentially in JavaScript's engine (RE2 is linear), a counted repetition the cost limit refuses
 * before it runs, and a nested comprehension stopped by the wall-clock bound. The tests check that
 * each answers or is refused as it should; how long that takes is measured here, not there.
 */
import { Activation, CelCostLimitError, CelTimeoutError, PolicyCompiler } from '../src/cel/index.js';
import { col, type Table } from './result.js';
import { percentile } from './stats.js';

const request = {
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  operation: 'CREATE' as const,
  userInfo: { username: 'bench', groups: [] },
};

interface Case {
  what: string;
  expression: string;
  object: unknown;
  /** The outcome the tests require: a value, or the error class that must end it. */
  outcome: string;
  timeoutMs?: number;
}

const CASES: Case[] = [
  { what: 'matches, nested repetition, 26 letters then "!"', expression: "object.s.matches('^([a-z]+ ?)+$')", object: { s: 'a'.repeat(26) + '!' }, outcome: 'false' },
  { what: 'find, nested repetition, 5,000 letters then "!"', expression: "object.s.find('([a-z]+ ?)+$')", object: { s: 'a'.repeat(5000) + '!' }, outcome: "''" },
  { what: 'find, [a-z]{1000}! on 100,000 characters', expression: "object.s.find('[a-z]{1000}!')", object: { s: ('a'.repeat(999) + '!').repeat(100) }, outcome: CelCostLimitError.name },
  {
    what: 'three nested all() over 400 items (64M steps), 50 ms bound',
    expression: 'object.l.all(x, object.l.all(y, object.l.all(z, x + y + z >= 0))) || true',
    object: { l: Array.from({ length: 400 }, (_, i) => i) },
    outcome: CelTimeoutError.name,
    timeoutMs: 50,
  },
];

function once(c: Case): { ms: number; got: string } {
  const compiled = new PolicyCompiler({ kind: 'validating', costLimit: Infinity }).compile(c.expression, { fieldPath: 'spec.validations[0].expression' });
  if (!compiled.ok) throw new Error(`cel-regex: ${c.expression} does not compile`);
  const act = new Activation({ object: c.object, oldObject: null, request }, { bounds: { costLimit: c.timeoutMs ? Number.MAX_SAFE_INTEGER : 1_000_000, timeoutMs: c.timeoutMs ?? 60_000 } });
  const started = performance.now();
  let got: string;
  try {
    const v = compiled.program.evaluate(act);
    got = v === false ? 'false' : v === '' ? "''" : String(v);
  } catch (err) {
    got = (err as Error).constructor.name;
  }
  return { ms: performance.now() - started, got };
}

/** Each case run `runs` times; the median and the slowest, and whether every run ended as required. */
export function celRegexTable(runs = 5): Table {
  const rows = CASES.map((c) => {
    const results = Array.from({ length: runs }, () => once(c));
    const ms = results.map((r) => r.ms).sort((a, b) => a - b);
    return { what: c.what, outcome: c.outcome, ok: results.every((r) => r.got === c.outcome) ? 'yes' : results.map((r) => r.got).join(', '), p50: percentile(ms, 50), max: ms[ms.length - 1] };
  });
  return {
    title: 'admission: hostile expressions in process (time to an answer or a refusal)',
    columns: [col('what', 'expression and input', 'text'), col('outcome', 'required outcome', 'text'), col('ok', 'every run', 'text'), col('p50', 'median, ms', 'ms'), col('max', 'slowest, ms', 'ms')],
    rows,
    notes: [
      `${runs} runs each, compiled once per run with no static cost limit; the runtime cost limit is Kubernetes' 1,000,000 (the last row: unlimited, so only the wall-clock bound can stop it). JavaScript's own RegExp takes seconds on the first row's input (×3.5 per two more letters) and does not finish the second.`,
    ],
  };
}
