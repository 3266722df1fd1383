/** A real orchd for the list tests, with the history retention knobs the shared helper does not pass. */
import { type Running } from '../../src/serve.js';
import type { RetentionPolicy } from '../../src/store/retention.js';
import { call, startServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/temp.js';

export interface ListServer extends Running {
  dataDir: string;
  /** Stops the server; the data folder stays until cleanup(). */
  stop(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function startListServer(opts: { dataDir?: string; historyRetention?: RetentionPolicy } = {}): Promise<ListServer> {
  const dataDir = opts.dataDir ?? tempDir('orchd-lists-', { until: 'file' });
  const running = await startServer({
    dataDir,
    policyStatus: true,
    historyRetention: opts.historyRetention ?? {},
    // The tests compact by calling compactor.runOnce(); the timer never fires during a test.
    compactionIntervalMs: 3_600_000,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.close();
  };
  return {
    ...running,
    dataDir,
    stop,
    async cleanup() {
      await stop();
      removeDir(dataDir);
    },
  };
}

export const EVENTS = '/apis/events.orch.io/v1';

export function event(name: string, namespace = 'default', extra: { labels?: Record<string, string>; reason?: string; type?: string; regardingName?: string; note?: string } = {}): any {
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, namespace, ...(extra.labels ? { labels: extra.labels } : {}) },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'orch.io/lists',
    reportingInstance: 'lists-1',
    action: 'Testing',
    reason: extra.reason ?? 'Listed',
    regarding: { kind: 'Pod', namespace, name: extra.regardingName ?? 'web-1', apiVersion: 'v1', uid: `uid-${name}` },
    note: extra.note ?? 'hello',
    type: extra.type ?? 'Normal',
  };
}

/** Creates an Event; returns the stored object. */
export async function createEvent(base: string, name: string, namespace = 'default', extra: Parameters<typeof event>[2] = {}): Promise<any> {
  const r = await call(base, 'POST', `${EVENTS}/namespaces/${namespace}/events`, event(name, namespace, extra));
  if (r.status !== 201) throw new Error(`create ${namespace}/${name}: ${r.status} ${r.text}`);
  return r.body;
}

export async function createNamespace(base: string, name: string, labels?: Record<string, string>): Promise<any> {
  const r = await call(base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });
  if (r.status !== 201) throw new Error(`create namespace ${name}: ${r.status} ${r.text}`);
  return r.body;
}

/** Runs fn over items, at most `width` at a time. */
export async function inBatches<T>(items: readonly T[], width: number, fn: (t: T, i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map((t, j) => fn(t, i + j)));
}

/** Every page of a list, following continue; returns the items, the pages' metadata and the number of pages. */
export async function listAll(base: string, path: string, limit: number, maxPages = 1000): Promise<{ items: any[]; metas: any[] }> {
  const items: any[] = [];
  const metas: any[] = [];
  let token: string | undefined;
  // As client-go's pager: continued pages drop resourceVersion and resourceVersionMatch (the token carries the version).
  const [p, q = ''] = path.split('?');
  const rest = new URLSearchParams(q);
  rest.delete('resourceVersion');
  rest.delete('resourceVersionMatch');
  const continued = rest.toString() ? `${p}?${rest}` : p;
  for (let n = 0; n < maxPages; n++) {
    const at = token ? continued : path;
    const sep = at.includes('?') ? '&' : '?';
    const r = await call(base, 'GET', `${at}${sep}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    if (r.status !== 200) throw new Error(`list ${path}: ${r.status} ${r.text}`);
    items.push(...r.body.items);
    metas.push(r.body.metadata);
    token = r.body.metadata.continue;
    if (!token) return { items, metas };
  }
  throw new Error(`more than ${maxPages} pages`);
}

export const names = (items: any[]): string[] => items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
