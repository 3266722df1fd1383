/** What a scenario hands back: tables for the terminal and JSON, plots for the HTML report, target checks. */

export type CellFormat = 'int' | 'rate' | 'ms' | 'pct' | 'ratio' | 'bytes' | 'seconds' | 'text';

export interface Column {
  key: string;
  title: string;
  format: CellFormat;
}

export type Cell = number | string | null;
export type Row = Record<string, Cell>;

export interface Table {
  title: string;
  columns: Column[];
  rows: Row[];
  /** How to read the table (what was measured, how, caveats). */
  notes: string[];
}

export interface Series {
  name: string;
  points: [number, number][];
}

export interface Plot {
  title: string;
  kind: 'line' | 'bars';
  xLabel: string;
  yLabel: string;
  logX?: boolean;
  logY?: boolean;
  series: Series[];
}

export interface TargetCheck {
  scenario: string;
  name: string;
  target: string;
  measured: string;
  /** null when the run did not measure it (e.g. a smaller size than the target's). */
  met: boolean | null;
}

export interface ScenarioResult {
  id: string;
  title: string;
  tables: Table[];
  plots: Plot[];
  targets: TargetCheck[];
  /** Wall time the scenario took, ms. */
  elapsedMs: number;
}

export const col = (key: string, title: string, format: CellFormat): Column => ({ key, title, format });
