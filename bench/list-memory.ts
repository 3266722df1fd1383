/**
 * What reading a whole collection once costs a fresh orchd: a plain list (one answer holding every
 * object) against a streaming list (a watch with sendInitialEvents=true: every object as an ADDED
 * event, then the initial-events-end bookmark). The server is started for the one read, so nothing
 * an earlier read cached is counted or reused; its memory is read from procfs (bench/proc.ts).
 */
import { request } from 'node:http';
import { INITIAL_EVENTS_END } from '../src/http/handlers/watch-stream.js';
import { Orchd, type OrchdOptions } from './orchd.js';
import { memory, resetPeakRss, waitIdle } from './proc.js';

export type ListRead = 'plain' | 'streaming';

export const LIST_READS: readonly ListRead[] = ['plain', 'streaming'];

export interface ListReadCost {
  read: ListRead;
  /** Objects the read delivered. */
  items: number;
  /** Bytes received (for a stream, up to the initial-events-end bookmark). */
  bytes: number;
  /** From the request to the last object (the bookmark for a stream), ms. */
  ms: number;
  /** RSS of the idle server just before the read, bytes. */
  idleRss: number;
  /** Peak RSS during the read minus idleRss. */
  peakGrowth: number;
  /** RSS once the server is idle again after the read, minus idleRss: what the read left cached. */
  retained: number;
}

const STREAMING_QUERY = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

const listReadPath = (collection: string, read: ListRead): string => (read === 'plain' ? collection : `${collection}?${STREAMING_QUERY}`);

const NEWLINE = 0x0a;
const ADDED = Buffer.from('{"type":"ADDED"');
const END_MARKER = Buffer.from(`"${INITIAL_EVENTS_END}":"true"`);

/**
 * GETs path and counts what arrives: a plain list's items (the answer is parsed whole), or a
 * stream's ADDED lines up to the initial-events-end bookmark, where the stream is closed.
 */
function readCollection(url: string, path: string, read: ListRead, timeoutMs: number): Promise<{ items: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { agent: false, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let items = 0;
      let rest = Buffer.alloc(0);
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (read === 'plain' || res.statusCode !== 200) {
          chunks.push(c);
          return;
        }
        let buf = rest.length ? Buffer.concat([rest, c]) : c;
        for (let nl = buf.indexOf(NEWLINE); nl >= 0; nl = buf.indexOf(NEWLINE)) {
          const line = buf.subarray(0, nl);
          buf = buf.subarray(nl + 1);
          if (line.subarray(0, ADDED.length).equals(ADDED)) items++;
          else if (line.includes(END_MARKER)) {
            req.destroy();
            return settle(() => resolve({ items, bytes }));
          }
        }
        rest = Buffer.from(buf);
      });
      res.on('end', () =>
        settle(() => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`GET ${path}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
          if (read === 'streaming') return reject(new Error(`GET ${path}: the stream ended before the initial-events-end bookmark`));
          resolve({ items: (JSON.parse(text) as { items: unknown[] }).items.length, bytes });
        }),
      );
      res.on('error', (err) => settle(() => reject(err)));
    });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      req.destroy();
      settle(() => reject(new Error(`GET ${path}: not read within ${timeoutMs} ms`)));
    }, timeoutMs);
    req.on('error', (err) => settle(() => reject(err)));
    req.end();
  });
}

/**
 * Every read of LIST_READS, each on its own fresh orchd over opts.dataDir. The folder is served once
 * and stopped gracefully first: that server creates what a first start creates (the system
 * namespaces) and saves a checkpoint, so the measured servers all load the same checkpoint and have
 * nothing to write. (A first write after a replay of 100k entries starts a checkpoint of the whole
 * view, which would land in the middle of a measured read.)
 *
 * With rounds > 1 each read is measured that many times and the round with the smallest peak is
 * kept: noise only ever adds to a peak (a major collection that happens to compact the heap during
 * the read copies live pages before it frees the old ones; on this 2-core VM one read in four of
 * the same streaming list peaked at +50–70 MiB instead of +11–15 MiB), so the least is the best
 * estimate of what the read itself needs.
 */
export async function listReadCosts(opts: OrchdOptions & { dataDir: string }, collection: string, timeoutMs = 120_000, rounds = 1): Promise<ListReadCost[]> {
  const { orchd } = await Orchd.start(opts);
  await orchd.stop();
  const costs: ListReadCost[] = [];
  for (const read of LIST_READS) {
    let best: ListReadCost | undefined;
    for (let r = 0; r < rounds; r++) {
      const cost = await listReadCost(opts, collection, read, timeoutMs);
      if (!best || cost.peakGrowth < best.peakGrowth) best = cost;
    }
    costs.push(best!);
  }
  return costs;
}

/** Starts orchd on opts.dataDir, reads the collection once as `read` while the server is otherwise idle, and kills it. */
async function listReadCost(opts: OrchdOptions & { dataDir: string }, collection: string, read: ListRead, timeoutMs: number): Promise<ListReadCost> {
  const { orchd, ready } = await Orchd.start(opts);
  try {
    // After the start's own work (the garbage collector's first scan, which also makes the slots of a
    // checkpoint's parts that a restart left unmade, and V8 collecting the load's garbage): the read
    // is measured, not the first touch of the view.
    await viewMade(ready.url, timeoutMs);
    await waitIdle(orchd.pid);
    const idleRss = memory(orchd.pid)?.rss ?? NaN;
    if (!resetPeakRss(orchd.pid)) throw new Error(`cannot reset the peak RSS of orchd (pid ${orchd.pid}) through /proc/${orchd.pid}/clear_refs`);
    const t0 = performance.now();
    const got = await readCollection(ready.url, listReadPath(collection, read), read, timeoutMs);
    const ms = performance.now() - t0;
    const peak = memory(orchd.pid)?.peakRss ?? NaN;
    await waitIdle(orchd.pid);
    const after = memory(orchd.pid)?.rss ?? NaN;
    return { read, ...got, ms, idleRss, peakGrowth: peak - idleRss, retained: after - idleRss };
  } finally {
    // Killed, not stopped: a graceful stop would spend seconds saving the checkpoint it loaded, unchanged.
    await orchd.stop('SIGKILL');
  }
}

/** Waits until the server's view has made every checkpoint part (orchd_view_unmade_parts 0 on /metrics). */
async function viewMade(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = await new Promise<string>((resolve, reject) => {
      request(`${url}/metrics`, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
    if (/^orchd_view_unmade_parts 0$/m.test(text)) return;
    if (Date.now() > until) throw new Error('the view still has unmade checkpoint parts');
    await new Promise((r) => setTimeout(r, 50));
  }
}
