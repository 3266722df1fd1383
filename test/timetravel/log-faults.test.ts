/** `orchd log --faults`: the faults a server injected, read from its data folder, each after the write it followed. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { run } from './helpers.js';

const NS = '/api/v1/namespaces';
let server: TestServer;
let created: string;
let stopped = false;

beforeAll(async () => {
  server = await startServer({
    faults: { seed: 1, rules: [{ name: 'conflict', match: { verbs: ['update'], resources: ['namespaces'], names: ['shop'] }, first: 1, inject: { status: 409 } }] },
  });
  const c = await call(server.url, 'POST', NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { a: '1' } } });
  created = c.body.metadata.resourceVersion;
  const body = { ...c.body, metadata: { ...c.body.metadata, labels: { a: '2' } } };
  expect((await call(server.url, 'PUT', `${NS}/shop`, body)).status).toBe(409);
  expect((await call(server.url, 'PUT', `${NS}/shop`, body)).status).toBe(200);
  await server.close();
  stopped = true;
});
afterAll(async () => {
  if (!stopped) await server?.close();
  await server?.stop().catch(() => undefined);
});

describe('orchd log --faults', () => {
  it('shows each fault after the write it followed, in a table and as JSON lines', async () => {
    const table = await run('log', '--data-dir', server.dataDir, '--faults', '--kind', 'namespaces', '--from', created);
    expect(table.code, table.err).toBe(0);
    const [header, ...body] = table.out.trim().split('\n');
    // Each column's start, looked for after the one before (RESOURCE is in RESOURCEVERSION, NAME in NAMESPACE).
    const starts: number[] = [];
    for (const c of ['RESOURCEVERSION', 'TIME', 'EVENT', 'RESOURCE', 'NAMESPACE', 'NAME', 'USER', 'MANAGER']) starts.push(header.indexOf(c, (starts.at(-1) ?? -1) + 1));
    const cells = (l: string) => starts.map((from, i) => l.slice(from, starts[i + 1]).trim());
    const rows = body.map(cells).filter((r) => r[5] === 'shop');
    expect(
      rows.map((r) => [r[0], r[2], r[4]]),
      table.out,
    ).toEqual([
      [created, 'ADDED', ''],
      [`(${created})`, 'FAULT status:409', ''],
      [String(Number(created) + 1), 'MODIFIED', ''],
    ]);
    const json = await run('log', '--data-dir', server.dataDir, '--faults', '--kind', 'namespaces', '--from', created, '-o', 'json');
    const lines = json.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.name === 'shop' || l.object?.metadata?.name === 'shop');
    expect(lines[1]).toMatchObject({
      resourceVersion: null,
      afterResourceVersion: created,
      type: 'FAULT',
      fault: 'status:409',
      rule: 'conflict',
      resource: 'namespaces',
      name: 'shop',
      verb: 'update',
      user: 'system:anonymous',
    });
    // Without the flag, the log alone.
    expect((await run('log', '--data-dir', server.dataDir, '--kind', 'namespaces', '--from', created, '-o', 'json')).out).not.toContain('FAULT');
  });

  it('needs a data folder', async () => {
    const r = await run('log', '--server', 'http://127.0.0.1:1', '--faults');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('--faults reads the journal in a data folder: it goes with --data-dir');
  });
});
