/** Inline SVG charts for the HTML report, with nothing but strings: axes, ticks, lines or bars, a legend. */
import type { Plot } from './result.js';

const W = 680;
const H = 340;
const M = { left: 70, right: 160, top: 34, bottom: 48 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function tickLabel(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a >= 1 || a === 0) return String(+v.toPrecision(3));
  return String(+v.toPrecision(2));
}

interface Axis {
  map(v: number): number;
  ticks: number[];
}

function axis(values: number[], log: boolean, from: number, to: number): Axis {
  const finite = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo = finite.length ? Math.min(...finite) : 0;
  let hi = finite.length ? Math.max(...finite) : 1;
  if (log) {
    const a = Math.floor(Math.log10(lo || 1));
    let b = Math.ceil(Math.log10(hi || 10));
    if (b === a) b = a + 1;
    const ticks: number[] = [];
    for (let k = a; k <= b; k++) ticks.push(10 ** k);
    return { map: (v) => from + ((Math.log10(Math.max(v, 10 ** a)) - a) / (b - a)) * (to - from), ticks };
  }
  if (!log && lo > 0) lo = 0;
  if (hi === lo) hi = lo + 1;
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  hi = Math.ceil(hi / step) * step;
  lo = Math.floor(lo / step) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(v);
  return { map: (v) => from + ((v - lo) / (hi - lo)) * (to - from), ticks };
}

export function renderPlot(p: Plot): string {
  const xs = p.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = p.series.flatMap((s) => s.points.map(([, y]) => y));
  const x = axis(xs, !!p.logX, M.left, W - M.right);
  const y = axis(ys, !!p.logY, H - M.bottom, M.top);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`);
  out.push(`<text x="${W / 2 - M.right / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">${esc(p.title)}</text>`);
  for (const t of y.ticks) {
    const py = y.map(t).toFixed(1);
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${py}" y2="${py}" stroke="#e4e4e4"/><text x="${M.left - 6}" y="${py}" text-anchor="end" dominant-baseline="middle">${tickLabel(t)}</text>`);
  }
  for (const t of x.ticks) {
    const px = x.map(t).toFixed(1);
    out.push(`<line x1="${px}" x2="${px}" y1="${M.top}" y2="${H - M.bottom}" stroke="#f0f0f0"/><text x="${px}" y="${H - M.bottom + 16}" text-anchor="middle">${tickLabel(t)}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#888"/>`);
  out.push(`<text x="${(M.left + W - M.right) / 2}" y="${H - 10}" text-anchor="middle">${esc(p.xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(p.yLabel)}</text>`);
  const n = p.series.length;
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b) && (!p.logX || a > 0) && (!p.logY || b > 0));
    if (p.kind === 'bars') {
      const slot = (W - M.left - M.right) / Math.max(1, x.ticks.length * 2) / n;
      for (const [a, b] of pts) {
        const px = x.map(a) - (n * slot) / 2 + i * slot;
        const py = y.map(b);
        out.push(
          `<rect x="${px.toFixed(1)}" y="${py.toFixed(1)}" width="${Math.max(1, slot - 1).toFixed(1)}" height="${(H - M.bottom - py).toFixed(1)}" fill="${color}"><title>${esc(s.name)}: ${tickLabel(a)} → ${tickLabel(b)}</title></rect>`,
        );
      }
    } else {
      const d = pts.map(([a, b], k) => `${k ? 'L' : 'M'}${x.map(a).toFixed(1)},${y.map(b).toFixed(1)}`).join('');
      if (d) out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"/>`);
      for (const [a, b] of pts.length <= 40 ? pts : []) {
        out.push(`<circle cx="${x.map(a).toFixed(1)}" cy="${y.map(b).toFixed(1)}" r="2.5" fill="${color}"><title>${esc(s.name)}: ${tickLabel(a)} → ${tickLabel(b)}</title></circle>`);
      }
    }
    const ly = M.top + 8 + i * 16;
    out.push(`<rect x="${W - M.right + 12}" y="${ly - 5}" width="12" height="10" fill="${color}"/><text x="${W - M.right + 30}" y="${ly}" dominant-baseline="middle">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
