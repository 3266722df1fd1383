/**
 * Faults at the http edge of a real orchd (startOrchd, a LevelDB folder), through fetch and
 * client-node: kube-apiserver's Status bodies, latency, commitThenDrop, staleRead, watch expire /
 * drop / reset / lag, /debug/faults, the metric, the journal beside the log and history().
 */
import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOrchd, type FaultRule, type Orchd } from '../../src/index.js';
import { readFaultJournal } from '../../src/faults/journal.js';
import { call } from '../helpers/server.js';
import { crdOf } from '../helpers/crd.js';
import { failure } from '../helpers/client-node.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/poll.js';

const GROUP = 'demo.example.com';
const W = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const widget = (name: string, size = 1) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { size } });

let api: Orchd;
let dataDir: string;
beforeAll(async () => {
  dataDir = tempDir('orchd-faults-', { until: 'file' });
  api = await startOrchd({ dataDir, crds: [crdOf(GROUP, 'widgets', 'Widget')] });
});
afterAll(() => api?.stop());
beforeEach(() => api.faults.clear());

const on = (...rules: FaultRule[]) => api.faults.set({ seed: 7, rules });

/** A watch's lines as they arrive, until the server ends or cuts the stream. */
function watchLines(path: string, onLine?: (line: any, all: any[]) => void): Promise<{ lines: any[]; ended: 'end' | 'reset'; at: number[] }> {
  return new Promise((resolve) => {
    const lines: any[] = [];
    const at: number[] = [];
    const req = httpRequest(`${api.url}${path}`, (res) => {
      let buf = '';
      res.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const l = JSON.parse(buf.slice(0, i));
          buf = buf.slice(i + 1);
          lines.push(l);
          at.push(performance.now());
          onLine?.(l, lines);
        }
      });
      res.on('end', () => resolve({ lines, ended: 'end', at }));
      res.on('error', () => resolve({ lines, ended: 'reset', at }));
      res.on('aborted', () => resolve({ lines, ended: 'reset', at }));
    });
    req.on('error', () => resolve({ lines, ended: 'reset', at }));
    req.end();
  });
}

async function created(name: string): Promise<string> {
  const r = await call(api.url, 'POST', W, widget(name));
  expect(r.status).toBe(201);
  return r.body.metadata.resourceVersion;
}

describe('status faults', () => {
  const statuses: [number, object, Record<string, string>][] = [
    [
      409,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Operation cannot be fulfilled on widgets.demo.example.com "s409": the object has been modified; please apply your changes to the latest version and try again',
        reason: 'Conflict',
        details: { name: 's409', group: GROUP, kind: 'widgets' },
        code: 409,
      },
      {},
    ],
    [
      429,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Too many requests, please try again later.',
        reason: 'TooManyRequests',
        details: { retryAfterSeconds: 1 },
        code: 429,
      },
      { 'retry-after': '1' },
    ],
    [
      500,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Internal error occurred: etcdserver: request timed out',
        reason: 'InternalError',
        details: { causes: [{ message: 'etcdserver: request timed out' }] },
        code: 500,
      },
      {},
    ],
    [503, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server is currently unable to handle the request', reason: 'ServiceUnavailable', code: 503 }, {}],
    [
      504,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 },
      {},
    ],
  ];
  it.each(statuses)("%i: kube-apiserver's Status body, nothing written", async (code, body, headers) => {
    const name = `s${code}`;
    await created(name);
    const before = api.resourceVersion;
    on({ name: 'one', match: { verbs: ['update'], names: [name] }, first: 1, inject: { status: code as 409 } });
    const current = (await call(api.url, 'GET', `${W}/${name}`)).body;
    const r = await call(api.url, 'PUT', `${W}/${name}`, { ...current, spec: { size: 2 } });
    expect(r.status).toBe(code);
    expect(r.body).toEqual(body);
    for (const [k, v] of Object.entries(headers)) expect(r.headers.get(k)).toBe(v);
    expect(api.resourceVersion).toBe(before);
    // first: 1 — the retry goes through.
    expect((await call(api.url, 'PUT', `${W}/${name}`, { ...current, spec: { size: 2 } })).status).toBe(200);
    expect(
      api.faults
        .injected()
        .filter((f) => f.request.name === name)
        .map((f) => f.fault),
    ).toEqual([`status:${code}`]);
  });
});

describe('latency', () => {
  it('delays the request by latencyMs before it is served', async () => {
    await created('slow');
    on({ match: { verbs: ['get'], names: ['slow'] }, inject: { latencyMs: 400 } });
    const t0 = performance.now();
    expect((await call(api.url, 'GET', `${W}/slow`)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(395);
    expect(api.faults.injected().at(-1)).toMatchObject({ fault: 'latency', detail: { latencyMs: 400 } });
  });
});

describe('commitThenDrop', () => {
  it('on a create: the client fails, the object exists, a retried create gets 409 AlreadyExists', async () => {
    const custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    const body = widget('lost-answer');
    on({ name: 'lost', match: { verbs: ['create'], resources: ['widgets.demo.example.com'] }, first: 1, inject: { commitThenDrop: true } });
    await expect(custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets', body })).rejects.toThrow();
    const got = await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets', name: 'lost-answer' });
    expect((got as any).spec).toEqual({ size: 1 });
    const retry = await failure(custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets', body }));
    expect(retry.code).toBe(409);
    expect(retry.status.reason).toBe('AlreadyExists');
    const f = api.faults.injected().at(-1)!;
    expect(f).toMatchObject({ rule: 'lost', fault: 'commitThenDrop', request: { verb: 'create', resource: 'widgets.demo.example.com', namespace: 'default', name: 'lost-answer' } });
    // The fault sits right after the write it dropped the answer of.
    expect(f.resourceVersion).toBe((got as any).metadata.resourceVersion);
    const history = await api.history('widgets', 'default', 'lost-answer', { faults: true });
    expect(history.map((e) => e.type)).toEqual(['ADDED', 'FAULT']);
  });

  it('answers a failed write as usual: nothing was committed', async () => {
    await created('exists');
    on({ match: { verbs: ['create'] }, inject: { commitThenDrop: true } });
    const r = await call(api.url, 'POST', W, widget('exists'));
    expect(r.status).toBe(409);
    expect(api.faults.injected().some((f) => f.request.name === 'exists' && f.fault === 'commitThenDrop')).toBe(false);
  });
});

describe('staleRead', () => {
  it('answers a list at an older version still kept, as a lagging watch cache', async () => {
    await created('stale-a');
    const rvB = await created('stale-b');
    on({ match: { verbs: ['list'], resources: ['widgets'] }, inject: { staleRead: { maxVersionsBehind: 1 } } });
    await created('stale-c');
    const list = await call(api.url, 'GET', W);
    expect(list.body.metadata.resourceVersion).toBe(rvB);
    const names = list.body.items.map((i: any) => i.metadata.name);
    expect(names).toContain('stale-b');
    expect(names).not.toContain('stale-c');
    expect(api.faults.injected().at(-1)).toMatchObject({ fault: 'staleRead', detail: { readAt: rvB } });
    // A read that names its version is not answered stale.
    const exact = await call(api.url, 'GET', `${W}?resourceVersion=${api.resourceVersion}&resourceVersionMatch=NotOlderThan`);
    expect(exact.body.items.map((i: any) => i.metadata.name)).toContain('stale-c');
  });
});

describe('staleRead on a get', () => {
  it('answers the object as it was a version or more back', async () => {
    await created('stale-get');
    const current = (await call(api.url, 'GET', `${W}/stale-get`)).body;
    expect((await call(api.url, 'PUT', `${W}/stale-get`, { ...current, spec: { size: 9 } })).status).toBe(200);
    on({ match: { verbs: ['get'], names: ['stale-get'] }, first: 1, inject: { staleRead: { maxVersionsBehind: 1 } } });
    const stale = await call(api.url, 'GET', `${W}/stale-get`);
    expect(stale.status).toBe(200);
    expect(stale.body.spec).toEqual({ size: 1 });
    expect((await call(api.url, 'GET', `${W}/stale-get`)).body.spec).toEqual({ size: 9 });
  });
});

describe('watch faults', () => {
  const since = () => `${W}?watch=true&resourceVersion=${api.resourceVersion}`;
  const writeSome = async (prefix: string, n: number) => {
    for (let i = 0; i < n; i++) await created(`${prefix}-${i}`);
  };

  it('expire: after N events, an ERROR event with 410 Expired, then the stream ends', async () => {
    on({ match: { verbs: ['watch'] }, after: { events: 2 }, inject: { watch: 'expire' } });
    const watching = watchLines(since());
    await api.watchers({ atLeast: 1 });
    await writeSome('exp', 3);
    const { lines, ended } = await watching;
    expect(ended).toBe('end');
    expect(lines.map((l) => l.type)).toEqual(['ADDED', 'ADDED', 'ERROR']);
    expect(lines[2].object).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    expect(lines[2].object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });

  it('drop: the stream ends cleanly after N events', async () => {
    on({ match: { verbs: ['watch'] }, after: { events: 1 }, inject: { watch: 'drop' } });
    const watching = watchLines(since());
    await api.watchers({ atLeast: 1 });
    await writeSome('drop', 2);
    const { lines, ended } = await watching;
    expect(ended).toBe('end');
    expect(lines.map((l) => l.type)).toEqual(['ADDED']);
  });

  it('reset: the connection is destroyed mid-stream', async () => {
    on({ match: { verbs: ['watch'] }, after: { events: 1 }, inject: { watch: 'reset' } });
    const watching = watchLines(since());
    await api.watchers({ atLeast: 1 });
    await writeSome('reset', 2);
    const { lines, ended } = await watching;
    expect(ended).toBe('reset');
    expect(lines.map((l) => l.type)).toEqual(['ADDED']);
  });

  it('lag: events reach this watcher latencyMs late', async () => {
    on({ match: { verbs: ['watch'] }, inject: { watch: 'lag', latencyMs: 300 } });
    const lagged: number[] = [];
    const rv = api.resourceVersion;
    const watching = watchLines(`${W}?watch=true&resourceVersion=${rv}`, () => lagged.push(performance.now()));
    await api.watchers({ atLeast: 1 });
    const t0 = performance.now();
    await created('lag-0');
    await new Promise<void>((resolve) => {
      const check = () => (lagged.length > 0 ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(lagged[0] - t0).toBeGreaterThanOrEqual(290);
    api.faults.clear();
    // reset() ends every watch: the stream is done.
    await api.reset();
    await watching;
  });
});

describe('/debug/faults', () => {
  const yaml = `apiVersion: apiserver.config.orch.io/v1alpha1
kind: FaultConfiguration
seed: 11
rules:
- name: conflicts
  match: { verbs: [update, patch], resources: [widgets.demo.example.com], namespaces: [default] }
  probability: 0.3
  inject: { status: 409 }
`;
  it('PUT replaces the rules, GET reads them, DELETE clears them', async () => {
    const put = await call(api.url, 'PUT', '/debug/faults', yaml, { 'content-type': 'application/yaml' });
    expect(put.status).toBe(200);
    const got = await call(api.url, 'GET', '/debug/faults');
    expect(got.body).toEqual({
      apiVersion: 'apiserver.config.orch.io/v1alpha1',
      kind: 'FaultConfiguration',
      seed: 11,
      rules: [{ name: 'conflicts', match: { verbs: ['update', 'patch'], resources: ['widgets.demo.example.com'], namespaces: ['default'] }, probability: 0.3, inject: { status: 409 } }],
    });
    expect((await call(api.url, 'DELETE', '/debug/faults')).status).toBe(200);
    expect((await call(api.url, 'GET', '/debug/faults')).body.rules).toEqual([]);
  });

  it('a bad PUT is refused with one line naming the field path, and nothing changes', async () => {
    await call(api.url, 'PUT', '/debug/faults', yaml);
    const bad = await call(api.url, 'PUT', '/debug/faults', yaml.replace('probability: 0.3', 'probability: 3'));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: 'rules[0].probability: Invalid value: 3: must be between 0 and 1' });
    expect((await call(api.url, 'GET', '/debug/faults')).body.rules[0].probability).toBe(0.3);
  });

  it('GET /debug/faults/injected lists what was injected', async () => {
    on({ name: 'listed', match: { verbs: ['get'], names: ['nope'] }, inject: { status: 503 } });
    await call(api.url, 'GET', `${W}/nope`);
    const r = await call(api.url, 'GET', '/debug/faults/injected');
    expect(r.body.injected.at(-1)).toMatchObject({ rule: 'listed', fault: 'status:503', request: { verb: 'get', name: 'nope' } });
  });
});

describe('visibility', () => {
  it('the metric counts faults by rule and fault', async () => {
    on({ name: 'counted', match: { verbs: ['get'], names: ['metric'] }, inject: { status: 500 } });
    await call(api.url, 'GET', `${W}/metric`);
    await call(api.url, 'GET', `${W}/metric`);
    const text = await (await fetch(`${api.url}/metrics`)).text();
    expect(text).toContain('orchd_injected_faults_total{rule="counted",fault="status:500"} 2');
  });

  it('the journal beside the log holds every fault injected, with the head version', async () => {
    on({ name: 'journaled', match: { verbs: ['get'], names: ['journal'] }, inject: { status: 504 } });
    await call(api.url, 'GET', `${W}/journal`);
    await sleep(50);
    const journal = readFaultJournal(dataDir);
    // The file keeps every fault; injected() those since the last reset() (a test above resets).
    const since = api.faults.injected();
    expect(journal.length).toBeGreaterThan(since.length);
    expect(journal.slice(-since.length)).toEqual(since);
    expect(journal.at(-1)).toMatchObject({ rule: 'journaled', resourceVersion: api.resourceVersion });
    expect((await readFile(join(dataDir, 'faults.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(journal.length);
  });

  it('history() shows faults in place among the writes', async () => {
    await created('hist');
    const current = (await call(api.url, 'GET', `${W}/hist`)).body;
    on({ name: 'conflict-once', match: { verbs: ['update'], names: ['hist'] }, first: 1, inject: { status: 409 } });
    expect((await call(api.url, 'PUT', `${W}/hist`, { ...current, spec: { size: 5 } })).status).toBe(409);
    expect((await call(api.url, 'PUT', `${W}/hist`, { ...current, spec: { size: 5 } })).status).toBe(200);
    const h = await api.history('widgets', 'default', 'hist', { faults: true });
    expect(h.map((e) => (e.type === 'FAULT' ? `FAULT ${e.fault.fault}` : e.type))).toEqual(['ADDED', 'FAULT status:409', 'MODIFIED']);
    // Without the option, history() is what it was.
    expect((await api.history('widgets', 'default', 'hist')).map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
  });
});

describe('determinism', () => {
  /** A fixed sequence of requests against a fresh server with the conflict rule; what was injected, without times. */
  async function run(seed: number): Promise<unknown[]> {
    const s = await startOrchd({
      crds: [crdOf(GROUP, 'widgets', 'Widget')],
      faults: { seed, rules: [{ match: { verbs: ['update', 'patch'], resources: ['widgets.demo.example.com'] }, probability: 0.3, inject: { status: 409 } }] },
    });
    try {
      expect((await call(s.url, 'POST', W, widget('d'))).status).toBe(201);
      for (let i = 0; i < 30; i++) {
        await call(s.url, 'PATCH', `${W}/d`, { spec: { size: i + 1 } }, { 'content-type': 'application/merge-patch+json' });
      }
      return s.faults.injected().map(({ time: _, ...f }) => f);
    } finally {
      await s.stop();
    }
  }

  it('the same seed twice: identical injected() lists; another seed: different', async () => {
    const a = await run(7);
    expect(a.length).toBeGreaterThan(0);
    expect(await run(7)).toEqual(a);
    expect(await run(8)).not.toEqual(a);
  });

  it('a bad rule fails the start with one line naming the field path', async () => {
    await expect(startOrchd({ faults: { rules: [{ match: { verbs: ['create'] }, inject: { watch: 'expire' } }] } })).rejects.toThrow(
      'orchd faults: rules[0].inject.watch: Invalid value: "expire": acts only on watch, and match.verbs [create] holds none of them: the rule could never act',
    );
  });
});
