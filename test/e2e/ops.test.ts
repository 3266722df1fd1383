/**
 * Operations endpoints (/healthz, /livez, /readyz, /metrics), readiness before the views are
 * rebuilt, and Event expiry (--event-ttl) through ordinary deletes in the log.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiServer } from '../../src/http/server.js';
import { buildRegistry } from '../../src/registry/build.js';
import { startControllers } from '../../src/controllers/start.js';
import { silentLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { LevelDbLog } from '../../src/log/leveldb-log.js';
import { kinds } from '../../src/resources/kinds.js';
import { Store } from '../../src/store/store.js';
import { call, serverForFile, startServer, type TestServer } from '../helpers/server.js';
import { eventually, sleep } from '../helpers/poll.js';
import { kindCase, unique } from './support.js';
import { tempDir } from '../helpers/temp.js';
import { typeCheckPolicy } from '../../src/admission/index.js';

const file = serverForFile();

const mwc = kindCase('MutatingWebhookConfiguration');
const event = kindCase('Event');

/** One sample of a Prometheus text exposition: the value of the line with exactly these labels. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.keys(got).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('health', () => {
  it('answers ok on /healthz, /livez and /readyz', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const r = await call(file.base, 'GET', path);
      expect(r.status, path).toBe(200);
      expect(r.text, path).toBe('ok');
    }
  });

  it('is live but not ready until the views are rebuilt, and refuses resource requests meanwhile', async () => {
    const dir = tempDir('orchd-ready-');
    const log = new LevelDbLog({ path: join(dir, 'log') });
    await log.open();
    const store = new Store({ log });
    const api = createApiServer({ objects: buildRegistry(store, kinds, { logger: silentLogger }), kinds, metrics: new Metrics(), logger: silentLogger });
    await new Promise<void>((resolve) => api.http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(api.http.address() as AddressInfo).port}`;
    const stops: (() => void)[] = [];
    try {
      expect((await call(url, 'GET', '/livez')).status).toBe(200);
      const notReady = await call(url, 'GET', '/readyz');
      expect(notReady.status).toBe(500);
      expect(notReady.text).toContain('readyz check failed');
      const early = await call(url, 'GET', mwc.collection());
      expect(early.status).toBe(503);
      expect(early.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
      await store.start();
      stops.push(...(await startControllers(api.context.objects, kinds, { logger: silentLogger, typeCheckPolicy, eventTtlSeconds: 3600 })));
      await api.start();
      expect((await call(url, 'GET', '/readyz')).status).toBe(200);
      expect((await call(url, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      for (const stop of stops.reverse()) stop();
      await api.close();
      await store.close();
      await log.close();
    }
  });
});

describe('metrics', () => {
  it('counts requests by verb, resource and code, with latencies, and reports log batches', async () => {
    const name = unique('m');
    for (let i = 0; i < 3; i++) await call(file.base, 'POST', mwc.collection(), mwc.make(`${name}-${i}`));
    await call(file.base, 'POST', mwc.collection(), mwc.make(`${name}-0`)); // 409
    await call(file.base, 'GET', mwc.item(`${name}-1`));
    await call(file.base, 'GET', mwc.collection());
    await call(file.base, 'DELETE', mwc.item(`${name}-2`));

    const r = await call(file.base, 'GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    const kind = { group: 'admissionregistration.orch.io', version: 'v1', resource: 'mutatingwebhookconfigurations', subresource: '', component: 'apiserver' };
    const collection = { ...kind, scope: 'cluster' };
    const one = { ...kind, scope: 'resource' };
    expect(sample(r.text, 'apiserver_request_total', { ...collection, verb: 'POST', code: '201' })).toBe(3);
    expect(sample(r.text, 'apiserver_request_total', { ...collection, verb: 'POST', code: '409' })).toBe(1);
    expect(sample(r.text, 'apiserver_request_total', { ...one, verb: 'GET', code: '200' })).toBe(1);
    expect(sample(r.text, 'apiserver_request_total', { ...collection, verb: 'LIST', code: '200' })).toBe(1);
    expect(sample(r.text, 'apiserver_request_total', { ...one, verb: 'DELETE', code: '200' })).toBe(1);
    expect(sample(r.text, 'apiserver_request_duration_seconds_count', { ...collection, verb: 'POST' })).toBe(4);
    expect(sample(r.text, 'apiserver_request_duration_seconds_bucket', { ...collection, verb: 'POST', le: '+Inf' })).toBe(4);

    // Writes so far: the system namespaces, 3 creates and a delete, each in some synced batch.
    const batches = r.text.match(/^orchd_log_batch_size_count (\d+)$/m);
    const records = r.text.match(/^orchd_log_batch_size_sum (\d+)$/m);
    expect(Number(batches?.[1])).toBeGreaterThan(0);
    expect(Number(records?.[1])).toBeGreaterThanOrEqual(4 + 4);
    expect(r.text).toMatch(/^orchd_log_append_duration_seconds_count [1-9]\d*$/m);
    expect(r.text).toMatch(/^# TYPE orchd_log_append_duration_seconds histogram$/m);
  });

  it('counts a watch when it ends, a server-side apply as APPLY, and reads stored objects from the views', async () => {
    const name = unique('m');
    const kind = { group: 'admissionregistration.orch.io', version: 'v1', resource: 'mutatingwebhookconfigurations', subresource: '', component: 'apiserver' };
    const before = sample((await call(file.base, 'GET', '/metrics')).text, 'apiserver_request_total', { ...kind, scope: 'cluster', verb: 'WATCH', code: '200' }) ?? 0;
    expect((await call(file.base, 'GET', `${mwc.collection()}?watch=true&timeoutSeconds=1`)).status).toBe(200);
    const applied = await call(file.base, 'PATCH', `${mwc.item(name)}?fieldManager=m`, JSON.stringify(mwc.make(name)), { 'Content-Type': 'application/apply-patch+yaml' });
    expect(applied.status, applied.text).toBe(201);
    const text = (await call(file.base, 'GET', '/metrics')).text;
    expect(sample(text, 'apiserver_request_total', { ...kind, scope: 'cluster', verb: 'WATCH', code: '200' })).toBe(before + 1);
    expect(sample(text, 'apiserver_request_total', { ...kind, scope: 'resource', verb: 'APPLY', code: '201' })).toBe(1);
    const listed = (await call(file.base, 'GET', mwc.collection())).body.items.length;
    expect(sample(text, 'apiserver_storage_objects', { resource: 'mutatingwebhookconfigurations.admissionregistration.orch.io' })).toBe(listed);
  });

  it('does not count unknown paths as resources', async () => {
    expect((await call(file.base, 'GET', '/apis/nothing.example.com/v1/widgets')).status).toBe(404);
    const r = await call(file.base, 'GET', '/metrics');
    expect(r.text).not.toContain('widgets');
  });
});

describe('unknown paths', () => {
  it('answers 404 with a Status', async () => {
    for (const path of ['/nope', '/apis/admissionregistration.orch.io/v9/validatingadmissionpolicies', '/api/v2/namespaces', '/metrics/extra']) {
      const r = await call(file.base, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    }
  });
});

describe('event expiry (--event-ttl)', () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startServer({ eventTtlSeconds: 1 });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('deletes an Event about ttl after its last write, as an ordinary delete in the log; other kinds stay', async () => {
    const url = short.url;
    const name = unique('ttl');
    const created = await call(url, 'POST', event.collection('default'), event.make(name));
    expect(created.status).toBe(201);
    const other = unique('keep');
    expect((await call(url, 'POST', mwc.collection(), mwc.make(other))).status).toBe(201);
    const start = Date.now();
    expect((await call(url, 'GET', event.item(name))).status).toBe(200);

    const gone = await eventually(async () => !(await call(url, 'GET', event.collection('default'))).body.items.some((o: any) => o.metadata.name === name), { timeoutMs: 8000 });
    expect(gone).toBe(true);
    // Not before the ttl (some slack for a slow, shared machine in the other direction only).
    expect(Date.now() - start).toBeGreaterThanOrEqual(800);
    expect((await call(url, 'GET', event.item(name))).status).toBe(404);
    expect((await call(url, 'GET', mwc.item(other))).status).toBe(200);

    // The expiry is a delete record in the log, after the create.
    const log = short.store.log;
    let deletes = 0;
    for await (const page of log.read(Number(created.body.metadata.resourceVersion) + 1)) {
      for (const e of page) if (e.type === 'delete' && e.key.endsWith(`/${name}`)) deletes++;
    }
    expect(deletes).toBe(1);
  });

  it('after a restart, an Event expires by the newest time it carries', async () => {
    const dir = tempDir('orchd-ttl-');
    const first = await startServer({ dataDir: dir });
    const oldName = unique('old');
    const fresh = unique('fresh');
    const stale = event.make(oldName);
    expect((await call(first.url, 'POST', event.collection('default'), stale)).status).toBe(201);
    await first.stop();

    // The same data with a 1 h ttl: nothing expires, and a new Event written now stays.
    const second = await startServer({ dataDir: dir });
    expect((await call(second.url, 'POST', event.collection('default'), event.make(fresh))).status).toBe(201);
    await sleep(300);
    expect((await call(second.url, 'GET', event.item(oldName))).status).toBe(200);
    await second.stop();

    // With a 1 s ttl, both go once a second has passed since the times they carry (creation, eventTime).
    const third = await startServer({ dataDir: dir, eventTtlSeconds: 1 });
    try {
      const gone = await eventually(async () => (await call(third.url, 'GET', event.collection('default'))).body.items.length === 0, { timeoutMs: 8000 });
      expect(gone).toBe(true);
    } finally {
      await third.stop();
    }
  });
});
