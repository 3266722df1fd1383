/**
 * kubectl 1.32 and 1.33 send `create namespace NAME` as a protobuf body (the `k8s\0` envelope around
 * a core/v1 Namespace); 1.27-1.31 send JSON. Each version creates its namespace against a real server.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionedKubectl } from '../helpers/kubectl.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

const VERSIONS = ['1.31', '1.32', '1.33'].map((v) => [v, versionedKubectl(v)] as const);

describe('kubectl create namespace', () => {
  let server: TestServer;
  let home: string;
  beforeAll(async () => {
    server = await startServer();
    home = tempDir('orchd-kubectl-pb-');
    await writeFile(join(home, 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
  });
  afterAll(async () => {
    await server?.stop();
  });
  const run = (bin: string, args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        bin,
        ['--server', server.url, '--kubeconfig', join(home, 'kubeconfig'), '--cache-dir', join(home, 'cache'), ...args],
        { timeout: 30_000, env: { ...process.env, HOME: home } },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });

  it.each(VERSIONS)('kubectl %s creates the namespace it names', async (v, bin) => {
    const name = `pb-${v.replace('.', '-')}`;
    const r = await run(bin, ['create', 'namespace', name]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`namespace/${name} created`);
    expect(r.code).toBe(0);
    const got = await call(server.url, 'GET', `/api/v1/namespaces/${name}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', metadata: { name }, status: { phase: 'Active' } });
    expect(got.body.metadata.managedFields?.[0]?.manager).toBe('kubectl-create');
  });

  // What differs between two creates whatever the encoding: the name, and what the server stamps.
  const normalized = (o: Record<string, any>) => {
    const { name, uid, resourceVersion, creationTimestamp, ...metadata } = o.metadata;
    expect([typeof name, typeof uid, typeof resourceVersion, typeof creationTimestamp]).toEqual(['string', 'string', 'string', 'string']);
    const managedFields = metadata.managedFields.map((m: Record<string, unknown>) => ({ ...m, time: typeof m.time }));
    return { ...o, metadata: { ...metadata, managedFields } };
  };

  it.skipIf(!VERSIONS.some(([v]) => v === '1.31') || !VERSIONS.some(([v]) => v === '1.33'))('stores the same Namespace from protobuf (1.33) as from JSON (1.31), managedFields included', async () => {
    const bin = (v: string) => VERSIONS.find(([x]) => x === v)![1];
    for (const [v, name] of [
      ['1.31', 'same-json'],
      ['1.33', 'same-pb'],
    ] as const)
      expect((await run(bin(v), ['create', 'namespace', name])).code).toBe(0);
    const json = (await call(server.url, 'GET', '/api/v1/namespaces/same-json')).body;
    const pb = (await call(server.url, 'GET', '/api/v1/namespaces/same-pb')).body;
    expect(pb.metadata).not.toHaveProperty('generateName');
    expect(pb.metadata).not.toHaveProperty('selfLink');
    expect(JSON.stringify(pb.metadata.managedFields[0].fieldsV1)).not.toContain('generateName');
    expect(pb.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'same-pb' });
    const { labels: jsonLabels, ...jsonRest } = normalized(json).metadata;
    const { labels: pbLabels, ...pbRest } = normalized(pb).metadata;
    expect(Object.keys(pbLabels)).toEqual(Object.keys(jsonLabels));
    expect({ ...normalized(pb), metadata: pbRest }).toStrictEqual({ ...normalized(json), metadata: jsonRest });
  });
});
