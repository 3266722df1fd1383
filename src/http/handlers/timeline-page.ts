/**
 * The /debug/timeline page: one self-contained HTML document (no scripts or styles from elsewhere, so
 * it works on a machine with no network). Its script reads the JSON beside it (timeline.ts), draws
 * the writes as stacked SVG bars by resource with a dashed line at each fork point (a folder made by
 * `orchd fork`), and on a click lists the state at the bar's last version; a click on an object shows
 * its history, each version with its diff.
 */
export const TIMELINE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>orchd timeline</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
  svg { border: 1px solid #ccc; background: #fafafa; }
  rect.bucket { fill: transparent; cursor: pointer; }
  rect.bucket:hover { fill: rgba(0, 0, 0, 0.06); }
  rect.bucket.chosen { fill: rgba(0, 80, 200, 0.12); }
  #legend span { margin-right: 1em; }
  #legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
  table { border-collapse: collapse; margin-top: 0.5em; }
  td, th { padding: 2px 10px; text-align: left; border-bottom: 1px solid #eee; }
  tr[data-key] { cursor: pointer; }
  tr[data-key]:hover { background: #eef; }
  pre.diff { background: #f6f6f6; padding: 6px; margin: 0.3em 0 1em; }
  .add { color: #080; } .del { color: #b00; } .hunk { color: #077; }
  .error { color: #b00; }
  line.fork { stroke: #c00; stroke-width: 2; stroke-dasharray: 5 3; }
  text.fork { fill: #c00; }
</style>
</head>
<body>
<h1>orchd timeline</h1>
<p id="summary">loading…</p>
<svg id="plot" width="960" height="220" role="img" aria-label="writes per second by resource"></svg>
<div id="legend"></div>
<h2 id="state-title"></h2>
<table id="state"></table>
<h2 id="history-title"></h2>
<div id="history"></div>
<script>
const COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const base = location.pathname.replace(/\\/$/, '');
const el = (tag, attrs = {}, text) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const svgEl = (tag, attrs) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};
const when = (ms) => (ms === null || ms === undefined ? '?' : new Date(ms).toISOString());

async function read(path) {
  const res = await fetch(base + path);
  const body = await res.json();
  if (!res.ok) throw new Error(body.message || res.status);
  return body;
}

function showError(where, err) {
  where.replaceChildren(el('span', { class: 'error' }, String(err.message || err)));
}

async function plot() {
  const data = await read('/writes?buckets=60');
  const svg = document.getElementById('plot');
  const width = 960, height = 220, axis = 20;
  const colour = Object.fromEntries(data.resources.map((r, i) => [r, COLOURS[i % COLOURS.length]]));
  const perSecond = (b) => Object.values(b.counts).reduce((a, n) => a + n, 0) / (data.bucketMs / 1000);
  const peak = Math.max(1e-9, ...data.buckets.map(perSecond));
  const w = width / Math.max(1, data.buckets.length);
  data.buckets.forEach((b, i) => {
    let y = height - axis;
    for (const r of data.resources) {
      const h = ((b.counts[r] || 0) / (data.bucketMs / 1000) / peak) * (height - axis - 10);
      if (h > 0) svg.appendChild(svgEl('rect', { x: i * w + 1, y: y - h, width: Math.max(1, w - 2), height: h, fill: colour[r], 'data-resource': r }));
      y -= h;
    }
    const hit = svgEl('rect', { class: 'bucket', x: i * w, y: 0, width: w, height, 'data-rv': b.lastRv });
    const title = svgEl('title', {});
    title.textContent = when(b.start) + ': ' + perSecond(b).toFixed(1) + ' writes/s, up to version ' + b.lastRv;
    hit.appendChild(title);
    hit.addEventListener('click', () => {
      for (const c of svg.querySelectorAll('rect.chosen')) c.classList.remove('chosen');
      hit.classList.add('chosen');
      showState(b.lastRv);
    });
    svg.appendChild(hit);
  });
  // A fork point between the versions of the bucket that holds it and the next.
  for (const f of data.forks) {
    const i = data.buckets.findIndex((b) => b.lastRv >= f.at);
    if (f.at < data.from || i < 0) continue;
    const x = data.buckets[i].lastRv === f.at ? (i + 1) * w : i * w + w / 2;
    const line = svgEl('line', { class: 'fork', 'data-rv': f.at, x1: x, x2: x, y1: 0, y2: height - axis });
    const title = svgEl('title', {});
    title.textContent = 'forked from ' + f.source + ' at version ' + f.at;
    line.appendChild(title);
    svg.appendChild(line);
    const text = svgEl('text', { class: 'fork', x: x + 3, y: 12, 'font-size': 11 });
    text.textContent = 'fork ' + f.at;
    svg.appendChild(text);
  }
  const label = svgEl('text', { x: 4, y: height - 5, 'font-size': 11 });
  label.textContent = when(data.buckets[0] && data.buckets[0].start) + '  …  peak ' + peak.toFixed(1) + ' writes/s';
  svg.appendChild(label);
  const legend = document.getElementById('legend');
  for (const r of data.resources) {
    const s = el('span', {}, r);
    s.prepend(el('i', { style: 'background:' + colour[r] }));
    legend.appendChild(s);
  }
  document.getElementById('summary').textContent = 'versions ' + data.from + '..' + data.head + ' (oldest kept ' + data.oldest + '), ' +
    (data.timesFromLog ? 'commit times from the log' : 'times from the objects\\' own timestamps') + '; click a bar for the state then.' +
    data.forks.map((f) => ' Forked from ' + f.source + ' at version ' + f.at + '.').join('');
}

async function showState(rv) {
  const table = document.getElementById('state');
  document.getElementById('state-title').textContent = 'State at version ' + rv;
  try {
    const data = await read('/state?rv=' + rv);
    table.replaceChildren();
    const head = el('tr');
    for (const h of ['RESOURCE', 'NAMESPACE', 'NAME', 'RESOURCEVERSION']) head.appendChild(el('th', {}, h));
    table.appendChild(head);
    for (const o of data.items) {
      const tr = el('tr', { 'data-key': o.key });
      for (const v of [o.resource, o.namespace, o.name, o.resourceVersion]) tr.appendChild(el('td', {}, v));
      tr.addEventListener('click', () => showHistory(o.key));
      table.appendChild(tr);
    }
  } catch (err) {
    showError(table, err);
  }
}

async function showHistory(key) {
  const box = document.getElementById('history');
  try {
    const data = await read('/history?key=' + encodeURIComponent(key));
    document.getElementById('history-title').textContent = 'History of ' + data.resource + '/' + (data.namespace ? data.namespace + '/' : '') + data.name;
    box.replaceChildren();
    for (const v of data.versions) {
      const div = el('div', { class: 'version', 'data-rv': v.rv });
      div.appendChild(el('h3', {}, v.rv + '  ' + v.type + '  ' + when(v.time) + '  ' + (v.manager ? v.manager + ' (' + v.operation + ')' : '')));
      const pre = el('pre', { class: 'diff' });
      for (const line of v.diff.split('\\n')) {
        const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
        pre.appendChild(el('span', cls ? { class: cls } : {}, line + '\\n'));
      }
      div.appendChild(pre);
      box.appendChild(div);
    }
  } catch (err) {
    showError(box, err);
  }
}

plot().catch((err) => showError(document.getElementById('summary'), err));
</script>
</body>
</html>
`;
