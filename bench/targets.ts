/** The summary of a run: each target of the issues, what was measured, met or not. */
import { col, type Table, type TargetCheck } from './result.js';

export function targetsTable(targets: TargetCheck[]): Table {
  return {
    // Targets come from many issues (3, 7, 19, 26, 32, …): a row names its issue where the scenario's does not.
    title: 'targets',
    columns: [col('scenario', 'scenario', 'text'), col('name', 'what', 'text'), col('target', 'target', 'text'), col('measured', 'measured', 'text'), col('met', 'met', 'text')],
    rows: targets.map((t) => ({ ...t, met: t.met === null ? 'not measured' : t.met ? 'yes' : 'NO' })),
    notes: [],
  };
}
