/**
 * The harness against any API server by kubeconfig alone: an orchd serving HTTPS with JWT
 * authentication (the CA and the bearer token only in the kubeconfig), two orchd replicas on one
 * etcd side by side, and a kubeconfig whose credentials the server refuses. Tiny runs: the shape of
 * what the harness reports and that it really wrote, never its speed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchContext } from '../../bench/context.js';
import { HttpClient } from '../../bench/http-client.js';
import { parseOptions, type BenchOptions } from '../../bench/options.js';
import { runRemote } from '../../bench/remote/scenarios.js';
import { BenchUsageError, connectionOf, discover } from '../../bench/remote/server.js';
import { kubeconfigYaml } from '../../src/config/kubeconfig-yaml.js';
import { startOrchd, type Orchd } from '../../src/index.js';
import { TestIssuer } from '../auth/oidc-issuer.js';
import { TestEtcd } from '../helpers/etcd.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

let home: string;
beforeAll(async () => {
  home = tempDir('orchd-bench-kubeconfig-');
});

const TINY = ['--clients', '2', '--read-clients', '2', '--duration', '300ms', '--warmup', '0ms'];

async function run(argv: string[]) {
  const opts = parseOptions([...argv, ...TINY]) as BenchOptions;
  const servers = await Promise.all(opts.kubeconfigs.map((k) => discover(connectionOf(k.file, k.context))));
  const ctx: BenchContext = { opts, orchdCli: 'unused: the servers are the kubeconfigs', log: () => undefined };
  return { servers, results: await runRemote(ctx, servers) };
}

/** The successful creates of Events a server counted (its /metrics), with the client given. */
async function creates(url: string, client: ConstructorParameters<typeof HttpClient>[2]): Promise<number> {
  const http = new HttpClient(url, 1, client);
  const text = (await http.request('GET', '/metrics')).body.toString('utf8');
  http.close();
  return [...text.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)$/gm)]
    .filter((m) => /verb="POST"/.test(m[1]) && /resource="events"/.test(m[1]) && /code="201"/.test(m[1]))
    .reduce((n, m) => n + Number(m[2]), 0);
}

describe('an orchd with HTTPS and JWT authentication, by kubeconfig only', () => {
  let issuer: TestIssuer;
  let api: Orchd;
  let file: string;
  beforeAll(async () => {
    issuer = await new TestIssuer().start();
    const authentication = {
      apiVersion: 'apiserver.config.orch.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [{ issuer: { url: issuer.url, certificateAuthority: issuer.pki.caPem, audiences: ['orchd'] }, claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } } }],
      anonymous: { enabled: false },
    };
    api = await startOrchd({ dataDir: join(home, 'jwt'), config: { authentication } });
    file = join(home, 'jwt.kubeconfig');
    await writeFile(file, api.kubeconfigYaml({ token: await issuer.token() }));
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
    await issuer?.stop();
  });

  it('names the server, finds its Events, writes and reads them, and cleans up', async () => {
    expect(api.url).toMatch(/^https:/);
    const { servers, results } = await run(['writes', 'reads', '--kubeconfig', file]);
    expect(servers.map((s) => [s.context, s.url, s.kind.apiVersion, s.kind.kind])).toEqual([['orchd', api.url, 'events.orch.io/v1', 'Event']]);
    expect(servers[0].version).toMatch(/^v\d/);
    expect(results.map((r) => r.id)).toEqual(['writes', 'reads']);
    const [writes, reads] = results.map((r) => r.tables[0]);
    expect(writes.rows.map((r) => r.clients)).toEqual([2]);
    expect(writes.rows[0].s0Rate).toBeGreaterThan(0);
    expect(writes.rows[0].s0Errors).toBe(0);
    expect(reads.rows[0].s0Rate).toBeGreaterThan(0);
    expect(reads.rows[0].s0Errors).toBe(0);
    expect(writes.notes[0]).toContain(`orchd: ${api.url}, ${servers[0].version}, writing events.orch.io/v1 Events`);
    expect(results[0].plots[0].series.map((s) => s.name)).toEqual([`orchd (${servers[0].version})`]);
    // The server counted the creates (at least the 200 the reads made first), and none is left.
    expect(await creates(api.url, servers[0].client)).toBeGreaterThan(200);
    const http = new HttpClient(api.url, 1, servers[0].client);
    const left = JSON.parse((await http.request('GET', '/apis/events.orch.io/v1/namespaces/default/events?labelSelector=bench.orch.io%2Frun')).body.toString('utf8'));
    http.close();
    expect(left.items).toEqual([]);
  });

  it('a kubeconfig whose credentials the server refuses is one line naming the context', async () => {
    const refused = join(home, 'refused.kubeconfig');
    await writeFile(refused, api.kubeconfigYaml({ token: 'not-a-token' }).replace(/\borchd\b/g, 'staging'));
    const err = await discover(connectionOf(refused)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchUsageError);
    const message = (err as Error).message;
    expect(message).toMatch(/^context "staging": https:\/\/127\.0\.0\.1:\d+ refused the credentials \(401 on GET \/version\)/);
    expect(message).not.toContain('\n');
  });

  it('a context the kubeconfig does not have is one line too', () => {
    expect(() => connectionOf(file, 'prod')).toThrow(new BenchUsageError(`--kubeconfig ${file}: context "prod" not found (contexts: orchd)`));
  });
});

describe('two orchd replicas on one etcd, side by side', () => {
  let etcd: TestEtcd;
  const replicas: TestServer[] = [];
  beforeAll(async () => {
    etcd = await TestEtcd.start();
    for (let i = 0; i < 2; i++) replicas.push(await startServer({ storage: 'etcd', etcd: { servers: [etcd.url] } }));
  }, 60_000);
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await etcd?.destroy();
  });

  it('runs each replica by its own kubeconfig and context into one table and one plot', async () => {
    const files = await Promise.all(
      replicas.map(async (r, i) => {
        const f = join(home, `replica-${i}.kubeconfig`);
        await writeFile(f, kubeconfigYaml({ server: r.url, name: `replica-${i}` }));
        return f;
      }),
    );
    const { servers, results } = await run(['writes', '--kubeconfig', files[0], '--context', 'replica-0', '--kubeconfig', files[1]]);
    expect(servers.map((s) => s.context)).toEqual(['replica-0', 'replica-1']);
    const [table] = results[0].tables;
    expect(table.columns.map((c) => c.title).filter((t) => t.includes('creates/s'))).toEqual(['replica-0 creates/s', 'replica-1 creates/s']);
    for (const key of ['s0', 's1']) {
      expect(table.rows[0][`${key}Rate`]).toBeGreaterThan(0);
      expect(table.rows[0][`${key}Errors`]).toBe(0);
    }
    expect(results[0].plots[0].series).toHaveLength(2);
    // On etcd each create is a request to etcd, timed in etcd_request_duration_seconds.
    const http = new HttpClient(replicas[0].url, 1);
    const text = (await http.request('GET', '/metrics')).body.toString('utf8');
    http.close();
    expect(Number(/^etcd_request_duration_seconds_count\{operation="create",type="events\.events\.orch\.io"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
  });
});
