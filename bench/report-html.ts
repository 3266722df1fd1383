/** One self-contained HTML page with every table and plot of a run: no script, no external file. */
import type { BenchRun } from './run.js';
import { machineLine } from './machine.js';
import type { Table } from './result.js';
import { renderPlot } from './svg.js';
import { formatCell } from './table.js';
import { targetsTable } from './targets.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function htmlTable(t: Table): string {
  const head = t.columns.map((c) => `<th>${esc(c.title)}</th>`).join('');
  const rows = t.rows.map((r) => `<tr>${t.columns.map((c) => `<td class="${c.format === 'text' ? 't' : 'n'}">${esc(formatCell(r[c.key] ?? null, c.format))}</td>`).join('')}</tr>`).join('\n');
  const notes = t.notes.length ? `<ul>${t.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '';
  return `<h3>${esc(t.title)}</h3><table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${notes}`;
}

export function renderHtmlReport(run: BenchRun): string {
  const sections = run.results.map(
    (r) => `<section><h2>${esc(r.id)}: ${esc(r.title)}</h2>${r.tables.map(htmlTable).join('\n')}<div class="plots">${r.plots.map(renderPlot).join('\n')}</div></section>`,
  );
  const targets = run.results.flatMap((r) => r.targets);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>orchd benchmark ${esc(run.machine.date)}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:1500px;color:#222}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:3px 8px}th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}ul{font-size:90%;color:#444}
.plots{display:flex;flex-wrap:wrap;gap:12px}code{background:#f3f3f3;padding:1px 4px}
</style></head><body>
<h1>orchd benchmark</h1>
<p>${esc(machineLine(run.machine))}</p>
<p>Command: <code>${esc(run.command)}</code>${run.etcdVersion ? `; compared with ${esc(run.etcdVersion)}` : ''}</p>
${targets.length ? htmlTable(targetsTable(targets)) : ''}
${sections.join('\n')}
</body></html>
`;
}
