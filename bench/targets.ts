/** The summary of a run: each target of the issues, what was measured, met or not. */
import { col, type Table, type TargetCheck } from './result.js';

export function targetsTable(targets: TargetCheck[]): Table {
  return {
    title: 'targets (issue 3 / issue 7)',
    columns: [col('scenario', 'scenario', 'text'), col('name', 'what', 'text'), col('target', 'target', 'text'), col('measured', 'measured', 'text'), col('met', 'met', 'text')],
    rows: targets.map((t) => ({ ...t, met: t.met === null ? 'not measured' : t.met ? 'yes' : 'NO' })),
    notes: [],
  };
}
