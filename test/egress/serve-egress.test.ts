/**
 * orchd started with an EgressSelectorConfiguration file: the OIDC issuer's traffic (discovery and
 * key set) follows the issuer's `egressSelectorType`, against a real issuer and a real CONNECT proxy
 * on 127.0.0.1; a selection orchd cannot serve stops the start.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Logger } from '../../src/observability/logger.js';
import { loadServerConfig } from '../../src/config/server-config.js';
import { type Running } from '../../src/serve.js';
import { startServer } from '../helpers/server.js';
import { httpsCall } from '../auth/https-call.js';
import { TestIssuer } from '../auth/oidc-issuer.js';
import { ConnectProxy } from './connect-proxy.js';
import { tempDir } from '../helpers/temp.js';

const VAP = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
const issuer = new TestIssuer();
let dir: string;
let proxy: ConnectProxy;
const running: Running[] = [];

beforeAll(async () => {
  await issuer.start();
  dir = tempDir('orchd-oidc-egress-');
});
afterAll(async () => {
  await issuer.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
  await proxy?.stop();
});

/** Errors the server logged, for the messages a refused proxy leaves. */
function recordingLogger(errors: string[]): Logger {
  return { info() {}, warn() {}, error: (msg, fields) => errors.push(`${msg} ${JSON.stringify(fields ?? {})}`) };
}

async function start(name: string, egressSelectorType: string | undefined, o: { logger?: Logger; refuseWith?: number } = {}): Promise<{ base: string; ca: Buffer }> {
  proxy = await new ConnectProxy({ tcp: true }).start();
  proxy.refuseWith = o.refuseWith;
  const authFile = join(dir, `${name}-auth.yaml`);
  const egressFile = join(dir, `${name}-egress.yaml`);
  await writeFile(
    authFile,
    stringify({
      apiVersion: 'apiserver.config.orch.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: { url: issuer.url, certificateAuthority: issuer.pki.caPem, audiences: ['orchd'], ...(egressSelectorType ? { egressSelectorType } : {}) },
          claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } },
        },
      ],
      anonymous: { enabled: false },
    }),
  );
  await writeFile(
    egressFile,
    stringify({
      apiVersion: 'apiserver.orch.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [
        { name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: proxy.address } } } },
        { name: 'controlplane', connection: { proxyProtocol: 'Direct' } },
      ],
    }),
  );
  const loaded = loadServerConfig({ authentication: authFile, egressSelector: egressFile });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  const dataDir = join(dir, `${name}-data`);
  const server = await startServer({ dataDir, logger: o.logger ?? recordingLogger([]), config: loaded.config, policyStatus: true });
  running.push(server);
  return { base: server.url, ca: await readFile(join(dataDir, 'apiserver.crt')) };
}

describe('OIDC issuer connections and egress selection', () => {
  it('egressSelectorType cluster: discovery and the key set are fetched through the cluster proxy', async () => {
    const before = { discovery: issuer.discoveryFetches, jwks: issuer.jwksFetches };
    const { base, ca } = await start('cluster', 'cluster');
    const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token()}` });
    expect(r.status).toBe(200);
    expect(issuer.discoveryFetches).toBeGreaterThan(before.discovery);
    expect(issuer.jwksFetches).toBeGreaterThan(before.jwks);
    expect(proxy.tunnels.length).toBeGreaterThanOrEqual(1);
    expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(issuer.url).host]));
  });

  it('egressSelectorType controlplane (Direct in the file) and no egressSelectorType dial the issuer directly', async () => {
    for (const type of ['controlplane', undefined]) {
      const { base, ca } = await start(`direct-${type ?? 'unset'}`, type);
      const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token()}` });
      expect(r.status).toBe(200);
      expect(proxy.tunnels).toEqual([]);
      for (const s of running.splice(0)) await s.close();
      await proxy.stop();
    }
  });

  it('a refusing proxy keeps the issuer unreachable: tokens are refused and the log says why', async () => {
    const errors: string[] = [];
    const { base, ca } = await start('refused', 'cluster', { logger: recordingLogger(errors), refuseWith: 403 });
    const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token()}` });
    expect(r.status).toBe(401);
    expect(errors.join('\n')).toMatch(/oidc authenticator: initializing .*refused CONNECT 127\.0\.0\.1:\d+: 403/);
  });

  it('a GRPC selection stops the start before the data folder is touched', async () => {
    const egressFile = join(dir, 'grpc-egress.yaml');
    await writeFile(
      egressFile,
      stringify({
        apiVersion: 'apiserver.orch.io/v1beta1',
        kind: 'EgressSelectorConfiguration',
        egressSelections: [{ name: 'cluster', connection: { proxyProtocol: 'GRPC', transport: { uds: { udsName: join(dir, 'konnectivity.sock') } } } }],
      }),
    );
    const loaded = loadServerConfig({ egressSelector: egressFile });
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
    const dataDir = join(dir, 'grpc-data');
    await expect(startServer({ dataDir, logger: recordingLogger([]), config: loaded.config, policyStatus: true })).rejects.toThrow(
      /egress selection "cluster": proxyProtocol GRPC is not supported by orchd/,
    );
    expect(existsSync(join(dataDir, 'log'))).toBe(false);
  });
});
