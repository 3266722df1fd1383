/** Plain-text tables for the terminal and RESULTS.md (GitHub-flavoured Markdown pipes). */
import type { Cell, CellFormat, Table } from './result.js';

const group = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function formatCell(v: Cell, format: CellFormat): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return '–';
  switch (format) {
    case 'int':
    case 'rate':
      return group(Math.round(v));
    case 'ms':
      return v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : group(v);
    case 'seconds':
      return v < 10 ? v.toFixed(2) : v.toFixed(1);
    case 'pct':
      return `${Math.round(v)} %`;
    case 'ratio':
      return `${v.toFixed(2)}×`;
    case 'bytes':
      if (v >= 1024 * 1024) return `${group(v / (1024 * 1024), 1)} MiB`;
      if (v >= 10 * 1024) return `${group(v / 1024, 1)} KiB`;
      return `${group(v)} B`;
    case 'text':
      return String(v);
  }
}

/** The table as aligned Markdown: readable in a terminal, pastable into a README. */
export function renderTable(t: Table): string {
  const head = t.columns.map((c) => c.title);
  const body = t.rows.map((r) => t.columns.map((c) => formatCell(r[c.key] ?? null, c.format)));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const numeric = t.columns.map((c) => c.format !== 'text');
  const line = (cells: string[]) => `| ${cells.map((s, i) => (numeric[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric[i] ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`;
  const notes = t.notes.map((n) => `- ${n}`);
  return [`### ${t.title}`, '', line(head), rule, ...body.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n');
}
