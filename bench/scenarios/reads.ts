/**
 * reads: with N stored Events (seeded, then replayed by a fresh orchd), at a fixed concurrency:
 * get by name, a 500-object list page (the first page), walking all pages with continue tokens, and
 * a selective label list (1 % of objects match). Beside it: the bare node:http server sending the same
 * reply bytes, and etcd's get by key / 500-key range reads over the same number of keys.
 */
import { rm } from 'node:fs/promises';
import { bounds, ratio, startOrchd, withBareHttp, type BenchContext, type Scenario } from '../context.js';
import { cellStats, errorNote, histogramPlot, histogramSeries, orchdColumns, orchdFields, prefixed } from '../cells.js';
import { expectStatus, HttpClient } from '../http-client.js';
import { closedLoop, type Op, type RunResult } from '../load.js';
import { Orchd } from '../orchd.js';
import { eventBytes, eventsPath, GROUP_LABEL } from '../payload.js';
import { memory } from '../proc.js';
import { col, type Plot, type Row, type ScenarioResult, type TargetCheck } from '../result.js';
import { seedEvents, seedName } from '../seed.js';

const PAGE = 500;
/** The list metadata (and so the continue token) comes before the items, within the first 2 KB. */
export const CONTINUE_WITHIN = 2048;

/** The continue token of a list answer from its first bytes: no need to parse ~800 KB. */
export function continueToken(head: Buffer): string | undefined {
  return /"continue":"([^"]*)"/.exec(head.subarray(0, CONTINUE_WITHIN).toString('latin1'))?.[1] || undefined;
}
const ETCD_PREFIX = '/registry/bench-reads/events/default/';

interface ReadOp {
  id: string;
  label: string;
  /** Concurrency of this cell when not --read-clients (the latency target is read unloaded: 1 client). */
  clients?: number;
  /** The orchd request path for client c (stateful ops keep per-client state). */
  orchd: (n: number) => { path: (c: number) => string; onReply?: (c: number, body: Buffer) => void };
  /** Bytes of each answer the op reads (the rest is counted, not kept): 0 unless it needs a continue token. */
  keep?: number;
}

const randomName = (n: number) => seedName(Math.floor(Math.random() * n));

const OPS: ReadOp[] = [
  { id: 'get', label: 'get by name', orchd: (n) => ({ path: () => `${eventsPath()}/${randomName(n)}` }) },
  { id: 'list', label: `list, first page of ${PAGE}`, orchd: () => ({ path: () => `${eventsPath()}?limit=${PAGE}` }) },
  { id: 'list-1', label: `list, first page of ${PAGE}, 1 client`, clients: 1, orchd: () => ({ path: () => `${eventsPath()}?limit=${PAGE}` }) },
  {
    id: 'walk',
    label: `list, every page of ${PAGE} (continue)`,
    keep: CONTINUE_WITHIN,
    orchd: () => {
      const next = new Map<number, string>();
      return {
        path: (c) => `${eventsPath()}?limit=${PAGE}${next.get(c) ? `&continue=${encodeURIComponent(next.get(c)!)}` : ''}`,
        onReply: (c, body) => {
          // The token sits in the list's metadata, before the items: no need to parse ~500 KB.
          const token = continueToken(body);
          if (token) next.set(c, token);
          else next.delete(c);
        },
      };
    },
  },
  { id: 'label', label: `label selector (1 % match), limit ${PAGE}`, orchd: () => ({ path: () => `${eventsPath()}?labelSelector=${encodeURIComponent(`${GROUP_LABEL}=g7`)}&limit=${PAGE}` }) },
];

interface Cell {
  size: number;
  op: ReadOp;
  orchd: RunResult;
  replyBytes: number;
  sample?: Buffer;
  http?: RunResult;
  etcd?: RunResult;
}

async function orchdCells(ctx: BenchContext, size: number): Promise<{ cells: Cell[]; rss: number }> {
  const dataDir = await Orchd.newDataDir();
  ctx.log(`reads: seeding ${size} Events`);
  await seedEvents(ctx.orchdCli, dataDir, size);
  const { orchd, ready } = await startOrchd(ctx, dataDir);
  const cells: Cell[] = [];
  try {
    for (const op of OPS) {
      const c = op.clients ?? ctx.opts.readClients;
      ctx.log(`reads: orchd ${op.id} at ${size} objects, ${c} clients`);
      const http = new HttpClient(ready.url, c);
      const o = op.orchd(size);
      // The whole of one answer, outside the measured loop, for the bare peer to send the same bytes.
      const first = await http.request('GET', o.path(0));
      expectStatus(first, 200);
      const sample = first.body;
      const keep = op.keep ?? 0;
      let bytes = 0;
      let replies = 0;
      const run: Op = async (client) => {
        const res = await http.request('GET', o.path(client), undefined, { keep });
        expectStatus(res, 200);
        o.onReply?.(client, res.body);
        bytes += res.bytes;
        replies++;
        return true;
      };
      const result = await closedLoop(c, bounds(ctx), run, { orchd: orchd.pid });
      http.close();
      cells.push({ size, op, orchd: result, replyBytes: replies ? bytes / replies : NaN, sample });
    }
    return { cells, rss: memory(orchd.pid)?.rss ?? NaN };
  } finally {
    await orchd.dispose();
    // The seeded folder is the harness's own (not the server's to remove).
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function httpCells(ctx: BenchContext, cells: Cell[]): Promise<void> {
  await withBareHttp(ctx, undefined, async (bare) => {
    const http = new HttpClient(bare.url, Math.max(ctx.opts.readClients, 1));
    for (const cell of cells) {
      if (!cell.sample) continue;
      const c = cell.op.clients ?? ctx.opts.readClients;
      ctx.log(`reads: bare node:http, same bytes as ${cell.op.id} at ${cell.size}`);
      const path = `/fixed/${cell.op.id}-${cell.size}`;
      expectStatus(await http.request('PUT', path, cell.sample), 204);
      // Read as orchd's answers were: only the bytes the op needs are kept.
      const keep = cell.op.keep ?? 0;
      cell.http = await closedLoop(c, bounds(ctx), async () => expectStatus(await http.request('GET', path, undefined, { keep }), 200), { http: bare.pid });
    }
    http.close();
  });
}

async function etcdCells(ctx: BenchContext, cells: Cell[], seeded: { n: number }): Promise<void> {
  const etcd = ctx.etcd!;
  const size = cells[0].size;
  if (seeded.n < size) {
    ctx.log(`reads: putting ${size - seeded.n} keys into etcd`);
    const pairs = function* () {
      for (let i = seeded.n; i < size; i++) yield [ETCD_PREFIX + seedName(i), eventBytes(seedName(i), i)] as [string, Buffer];
    };
    await etcd.bulkPut(pairs());
    seeded.n = size;
  }
  const after = new Map<number, Buffer>();
  const prefixEnd = ETCD_PREFIX.slice(0, -1) + String.fromCharCode(ETCD_PREFIX.charCodeAt(ETCD_PREFIX.length - 1) + 1);
  const ops: Record<string, Op | undefined> = {
    get: async () => (await etcd.client.get(ETCD_PREFIX + randomName(size)).buffer()) !== null,
    list: async () => (await etcd.client.getAll().prefix(ETCD_PREFIX).limit(PAGE).exec()).kvs.length === PAGE,
    'list-1': async () => (await etcd.client.getAll().prefix(ETCD_PREFIX).limit(PAGE).exec()).kvs.length === PAGE,
    walk: async (client) => {
      const start = after.get(client);
      const res = await etcd.client
        .getAll()
        .inRange({ start: start ? Buffer.concat([start, Buffer.from([0])]) : ETCD_PREFIX, end: prefixEnd })
        .limit(PAGE)
        .exec();
      if (res.more && res.kvs.length) after.set(client, res.kvs[res.kvs.length - 1].key);
      else after.delete(client);
      return true;
    },
  };
  for (const cell of cells) {
    const op = ops[cell.op.id];
    if (!op) continue;
    ctx.log(`reads: etcd ${cell.op.id} at ${size} keys`);
    cell.etcd = await closedLoop(cell.op.clients ?? ctx.opts.readClients, bounds(ctx), op, { etcd: etcd.pid });
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const started = performance.now();
  const cells: Cell[] = [];
  const rssBySize = new Map<number, number>();
  const etcdSeeded = { n: 0 };
  for (const size of [...ctx.opts.readSizes].sort((a, b) => a - b)) {
    const { cells: sized, rss } = await orchdCells(ctx, size);
    rssBySize.set(size, rss);
    if (ctx.etcd) await etcdCells(ctx, sized, etcdSeeded);
    cells.push(...sized);
  }
  if (ctx.opts.ceilings) await httpCells(ctx, cells);

  const rows: Row[] = cells.map((cell) => {
    const row: Row = { size: cell.size, op: cell.op.label, ...orchdFields(cell.orchd), bytes: cell.replyBytes };
    if (cell.etcd) Object.assign(row, prefixed('etcd', cellStats(cell.etcd)), { vsEtcd: ratio(cell.orchd.throughput, cell.etcd.throughput) });
    if (cell.http) Object.assign(row, { httpRate: cell.http.throughput, vsHttp: ratio(cell.orchd.throughput, cell.http.throughput) });
    return row;
  });
  const columns = [col('size', 'objects', 'int'), col('op', 'operation', 'text'), ...orchdColumns('orchd req/s'), col('bytes', 'reply', 'bytes')];
  if (ctx.etcd) columns.push(col('etcdRate', 'etcd ops/s', 'rate'), col('etcdP50', 'etcd p50', 'ms'), col('etcdP99', 'etcd p99', 'ms'), col('vsEtcd', 'orchd/etcd', 'ratio'));
  if (ctx.opts.ceilings) columns.push(col('httpRate', 'bare http same bytes/s', 'rate'), col('vsHttp', 'orchd/http', 'ratio'));
  const notes = [
    `${ctx.opts.readClients} clients (unless the operation says otherwise), closed loop; each cell ${ctx.opts.warmupMs} ms warm-up then ${ctx.opts.durationMs} ms measured. Objects: ~1 KB Events written straight into orchd's log (bench/seed.ts), then replayed by a fresh orchd before measuring.`,
    `orchd RSS after the cells: ${[...rssBySize].map(([n, b]) => `${(b / 2 ** 20).toFixed(0)} MiB at ${n.toLocaleString('en-US')} objects`).join(', ')}.`,
    'Ceiling: the bare node:http server answering GET with the very bytes orchd sent for that operation.',
    ...(ctx.etcd
      ? [
          'etcd: linearizable get of one key; range of 500 keys under a prefix holding as many keys as orchd has objects (values ~1 KB); "every page" walks ranges from the last key; no label selection in etcd (the Kubernetes API server filters after reading).',
        ]
      : []),
    ...cells.flatMap((c) => [...errorNote(`orchd ${c.op.id} at ${c.size}`, c.orchd), ...(c.etcd ? errorNote(`etcd ${c.op.id} at ${c.size}`, c.etcd) : [])]),
  ];

  const plots: Plot[] = [...new Set(cells.map((c) => c.size))].map((size) =>
    histogramPlot(
      `orchd read latency at ${size.toLocaleString('en-US')} objects`,
      cells.filter((c) => c.size === size).map((c) => histogramSeries(c.op.id, c.orchd.latency)),
    ),
  );

  const targets: TargetCheck[] = [];
  const list100k = cells.find((c) => c.size === 100_000 && c.op.id === 'list-1');
  const largest = Math.max(...cells.map((c) => c.size));
  const listLargest = cells.find((c) => c.size === largest && c.op.id === 'list-1');
  const p99 = (c: Cell) => cellStats(c.orchd).p99;
  targets.push({
    scenario: 'reads',
    name: `list of a ${PAGE}-object page at 100k objects, p99 (1 client)`,
    target: '< 10 ms',
    measured: list100k ? `${p99(list100k).toFixed(2)} ms` : listLargest ? `not at 100k (${p99(listLargest).toFixed(2)} ms at ${largest})` : 'not measured',
    met: list100k ? p99(list100k) < 10 : null,
  });
  const getLargest = cells.find((c) => c.size === largest && c.op.id === 'get');
  if (getLargest?.http) {
    const r = getLargest.orchd.throughput / getLargest.http.throughput;
    targets.push({ scenario: 'reads', name: `get of one object vs bare node:http (same bytes), ${largest} objects`, target: '≥ 0.50×', measured: `${r.toFixed(2)}×`, met: r >= 0.5 });
  }
  return { id: 'reads', title: reads.title, tables: [{ title: 'reads: get, list pages, label selector', columns, rows, notes }], plots, targets, elapsedMs: performance.now() - started };
}

export const reads: Scenario = { id: 'reads', title: 'Reads: get, list pages, selective label list', run };
