/**
 * The /debug/timeline page: one self-contained HTML document (no scripts or styles from elsewhere, so
 * it works on a machine with no network). Its script reads the JSON beside it (timeline.ts) and draws
 * the writes as stacked SVG bars coloured by verb (deletes red, marked above their bar), on a time
 * axis with a label every few bars, with a dashed line at each fork point. Filters (resource,
 * namespace, name, writer) narrow what is listed; a click on a bar lists who changed what in its
 * span, deletes included, and the state at its end; a click on an object (a deleted one too) shows
 * its history, each version with its writer and its diff (managedFields hidden unless asked for).
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
  text.tick { fill: #444; font-size: 11px; }
  line.tick { stroke: #bbb; }
  text.delete-mark { fill: #c00; font-size: 11px; font-weight: bold; }
  #legend span { margin-right: 1em; }
  #legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
  #filters { margin: 0.8em 0; }
  #filters label { margin-right: 1em; }
  table { border-collapse: collapse; margin-top: 0.5em; }
  td, th { padding: 2px 10px; text-align: left; border-bottom: 1px solid #eee; }
  tr[data-key] { cursor: pointer; }
  tr[data-key]:hover { background: #eef; }
  tr.verb-delete td { color: #b00; }
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
<svg id="plot" width="960" height="240" role="img" aria-label="writes per second by verb"></svg>
<div id="legend"></div>
<form id="filters">
  <label>resource <select id="f-resource"><option value="">any</option></select></label>
  <label>namespace <input id="f-namespace" size="12"></label>
  <label>name <input id="f-name" size="16"></label>
  <label>writer (user or manager) <input id="f-writer" size="16"></label>
  <label><input type="checkbox" id="f-managed"> managedFields in diffs</label>
  <button id="f-all" type="button">every change matching</button>
</form>
<h2 id="changes-title"></h2>
<table id="changes"></table>
<h2 id="state-title"></h2>
<table id="state"></table>
<h2 id="history-title"></h2>
<div id="history"></div>
<script>
const VERB_COLOURS = { create: '#59a14f', update: '#4e79a7', patch: '#f28e2b', apply: '#b07aa1', write: '#9c9c9c', delete: '#e15759' };
const VERB_ORDER = ['create', 'update', 'patch', 'apply', 'write', 'delete'];
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
/** A time as an axis labels it: the time of day, to the ms when labels are under a second apart, with the date when asked. */
const clock = (ms, withDate, fine) => { const t = new Date(ms).toISOString(); const day = t.slice(11, fine ? 23 : 19); return withDate ? t.slice(5, 10) + ' ' + day : day; };
let data;
let chosen;
/** The newest read asked for per panel: an answer to an older one (filters changed meanwhile) is dropped. */
const asked = { changes: 0, state: 0, history: 0 };

async function read(path) {
  const res = await fetch(base + path);
  const body = await res.json();
  if (!res.ok) throw new Error(body.message || res.status);
  return body;
}

function showError(where, err) {
  where.replaceChildren(el('span', { class: 'error' }, String(err.message || err)));
}

/** What the filters ask for, as query parameters; their values for the state's rows. */
function filters() {
  const f = { resource: document.getElementById('f-resource').value, namespace: document.getElementById('f-namespace').value.trim(), name: document.getElementById('f-name').value.trim(), writer: document.getElementById('f-writer').value.trim() };
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== ''));
}

const verbsOf = (b) => [...VERB_ORDER.filter((v) => b.verbs[v]), ...Object.keys(b.verbs).filter((v) => !VERB_ORDER.includes(v))];

async function plot() {
  data = await read('/writes?buckets=60');
  const svg = document.getElementById('plot');
  const width = 960, height = 240, axis = 34, top = 16;
  const perSecond = (b) => Object.values(b.counts).reduce((a, n) => a + n, 0) / (data.bucketMs / 1000);
  const peak = Math.max(1e-9, ...data.buckets.map(perSecond));
  const w = width / Math.max(1, data.buckets.length);
  data.buckets.forEach((b, i) => {
    let y = height - axis;
    // Deletes on top, so a bar of deletes is seen at a glance; each verb its colour.
    for (const v of verbsOf(b)) {
      const h = (b.verbs[v] / (data.bucketMs / 1000) / peak) * (height - axis - top);
      if (h > 0) svg.appendChild(svgEl('rect', { class: 'verb', x: i * w + 1, y: y - h, width: Math.max(1, w - 2), height: h, fill: VERB_COLOURS[v] || '#666', 'data-verb': v }));
      y -= h;
    }
    if (b.verbs.delete) {
      const mark = svgEl('text', { class: 'delete-mark', x: i * w + w / 2, y: Math.max(11, y - 3), 'text-anchor': 'middle', 'data-deletes': b.verbs.delete, 'data-bucket': i });
      mark.textContent = '✕' + b.verbs.delete;
      svg.appendChild(mark);
    }
    const hit = svgEl('rect', { class: 'bucket', x: i * w, y: 0, width: w, height: height - axis, 'data-rv': b.lastRv, 'data-first': b.firstRv });
    const title = svgEl('title', {});
    title.textContent = when(b.start) + ': ' + perSecond(b).toFixed(1) + ' writes/s, versions ' + b.firstRv + '..' + b.lastRv + '; ' +
      verbsOf(b).map((v) => b.verbs[v] + ' ' + v).join(', ') + '; ' + Object.entries(b.counts).map(([r, n]) => n + ' ' + r).join(', ');
    hit.appendChild(title);
    hit.addEventListener('click', () => {
      for (const c of svg.querySelectorAll('rect.chosen')) c.classList.remove('chosen');
      hit.classList.add('chosen');
      chosen = b;
      showChanges(b.firstRv, b.lastRv, 'Changes in ' + clock(b.start, true, true) + '..' + clock(b.end, true, true) + ' (versions ' + b.firstRv + '..' + b.lastRv + ')');
      showState(b.lastRv);
    });
    svg.appendChild(hit);
  });
  // A readable time axis: a tick and a label every few bars, the date too when the span crosses days.
  const n = data.buckets.length;
  if (n > 0) {
    const first = data.buckets[0].start, last = data.buckets[n - 1].end;
    const days = new Date(first).toISOString().slice(0, 10) !== new Date(last).toISOString().slice(0, 10);
    const every = Math.max(1, Math.ceil(n / 8));
    const fine = data.bucketMs * every < 1000;
    for (let i = 0; i <= n; i += every) {
      const x = Math.min(width - 1, i * w);
      svg.appendChild(svgEl('line', { class: 'tick', x1: x, x2: x, y1: height - axis, y2: height - axis + 5 }));
      const t = svgEl('text', { class: 'tick', x: Math.min(width - 60, x + 2), y: height - axis + 17 });
      t.textContent = clock(i < n ? data.buckets[i].start : last, days, fine);
      svg.appendChild(t);
    }
    const peakText = svgEl('text', { class: 'tick', x: 4, y: height - 3 });
    peakText.textContent = 'UTC, ' + new Date(first).toISOString().slice(0, 10) + '; ' + (data.bucketMs / 1000) + ' s a bar; peak ' + peak.toFixed(1) + ' writes/s';
    svg.appendChild(peakText);
  }
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
  const legend = document.getElementById('legend');
  for (const v of [...VERB_ORDER.filter((x) => data.verbs.includes(x)), ...data.verbs.filter((x) => !VERB_ORDER.includes(x))]) {
    const s = el('span', { 'data-verb': v }, v);
    s.prepend(el('i', { style: 'background:' + (VERB_COLOURS[v] || '#666') }));
    legend.appendChild(s);
  }
  const select = document.getElementById('f-resource');
  for (const r of data.resources) select.appendChild(el('option', { value: r }, r));
  document.getElementById('summary').textContent = 'versions ' + data.from + '..' + data.head + ' (oldest kept ' + data.oldest + '), ' +
    (data.timesFromLog ? 'commit times from the log' : 'times from the objects\\' own timestamps') + '; click a bar for who changed what then, and the state at its end.' +
    data.forks.map((f) => ' Forked from ' + f.source + ' at version ' + f.at + '.').join('');
}

async function showChanges(from, to, title) {
  const table = document.getElementById('changes');
  document.getElementById('changes-title').textContent = title;
  try {
    const q = new URLSearchParams({ from, to, ...filters() });
    const ticket = ++asked.changes;
    const got = await read('/changes?' + q);
    if (ticket !== asked.changes) return;
    table.replaceChildren();
    const head = el('tr');
    for (const h of ['VERSION', 'TIME', 'VERB', 'RESOURCE', 'NAMESPACE', 'NAME', 'USER', 'MANAGER']) head.appendChild(el('th', {}, h));
    table.appendChild(head);
    for (const c of got.changes) {
      const tr = el('tr', { 'data-key': c.key, 'data-rv': c.rv, 'data-verb': c.verb, class: 'verb-' + c.verb });
      for (const v of [c.rv, when(c.time), c.verb + (c.subresource ? '/' + c.subresource : ''), c.resource, c.namespace, c.name, c.user || '?', c.manager || '-']) tr.appendChild(el('td', {}, String(v)));
      tr.addEventListener('click', () => showHistory(c.key));
      table.appendChild(tr);
    }
    if (got.matched > got.changes.length) document.getElementById('changes-title').textContent += ' — the newest ' + got.changes.length + ' of ' + got.matched;
    table.setAttribute('data-span', from + '..' + to);
  } catch (err) {
    showError(table, err);
  }
}

async function showState(rv) {
  const table = document.getElementById('state');
  document.getElementById('state-title').textContent = 'State at version ' + rv;
  try {
    const ticket = ++asked.state;
    const got = await read('/state?rv=' + rv);
    if (ticket !== asked.state) return;
    const f = filters();
    table.replaceChildren();
    const head = el('tr');
    for (const h of ['RESOURCE', 'NAMESPACE', 'NAME', 'RESOURCEVERSION']) head.appendChild(el('th', {}, h));
    table.appendChild(head);
    for (const o of got.items) {
      if ((f.resource && o.resource !== f.resource) || (f.namespace && o.namespace !== f.namespace) || (f.name && o.name !== f.name)) continue;
      const tr = el('tr', { 'data-key': o.key });
      for (const v of [o.resource, o.namespace, o.name, o.resourceVersion]) tr.appendChild(el('td', {}, v));
      tr.addEventListener('click', () => showHistory(o.key));
      table.appendChild(tr);
    }
  } catch (err) {
    showError(table, err);
  }
}

/** Who made a version, as orchd log says it: the user, the verb (and subresource), the field manager; a guess from managedFields says so. */
const writerText = (v) => v.guessed ? (v.manager + '? (' + v.operation + ')') : v.user === null ? '' : v.user + '  ' + (v.verb || '?') + (v.subresource ? '/' + v.subresource : '') + '  ' + (v.manager || '-');

let shownKey;
async function showHistory(key) {
  shownKey = key;
  const box = document.getElementById('history');
  try {
    const managed = document.getElementById('f-managed').checked ? '&managedFields=true' : '';
    const ticket = ++asked.history;
    const got = await read('/history?key=' + encodeURIComponent(key) + managed);
    if (ticket !== asked.history) return;
    document.getElementById('history-title').textContent = 'History of ' + got.resource + '/' + (got.namespace ? got.namespace + '/' : '') + got.name;
    box.replaceChildren();
    for (const v of got.versions) {
      const div = el('div', { class: 'version', 'data-rv': v.rv, 'data-type': v.type });
      div.appendChild(el('h3', {}, v.rv + '  ' + v.type + '  ' + when(v.time) + '  ' + writerText(v)));
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

/** The filters apply to what is listed: the chosen bar's changes and state, else every change in the plot's span. */
function refresh() {
  if (chosen) {
    showChanges(chosen.firstRv, chosen.lastRv, document.getElementById('changes-title').textContent.replace(/ — the newest.*$/, ''));
    showState(chosen.lastRv);
  } else showAll();
}
const showAll = () => showChanges(data.from, data.head, 'Every change matching the filters (versions ' + data.from + '..' + data.head + ')');
for (const id of ['f-resource', 'f-namespace', 'f-name', 'f-writer']) document.getElementById(id).addEventListener('change', refresh);
document.getElementById('filters').addEventListener('submit', (e) => { e.preventDefault(); refresh(); });
document.getElementById('f-managed').addEventListener('change', () => shownKey && showHistory(shownKey));
document.getElementById('f-all').addEventListener('click', () => { chosen = undefined; showAll(); });

plot().catch((err) => showError(document.getElementById('summary'), err));
</script>
</body>
</html>
`;
