/**
 * orchd started with an AuthenticationConfiguration file against a real OIDC issuer on 127.0.0.1:
 * it serves HTTPS with the self-signed certificate it generates in its data folder, lets valid
 * tokens in, answers bad ones with kube's 401 Status, applies anonymous conditions, and kubectl
 * works with --token and --certificate-authority.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { stringify } from 'yaml';
import { loadServerConfig, type ServerConfigFiles } from '../../src/config/server-config.js';
import { type Running, type ServeOptions } from '../../src/serve.js';
import { runKubectl, versionedKubectl } from '../helpers/kubectl.js';
import { call, startServer } from '../helpers/server.js';
import { httpsCall } from './https-call.js';
import { TestIssuer } from './oidc-issuer.js';
import { replaceFile } from '../helpers/replace-file.js';
import { tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/poll.js';

const VAP = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

const issuer = new TestIssuer();
let dir: string;
const running: Running[] = [];

beforeAll(async () => {
  await issuer.start();
  dir = tempDir('orchd-authn-');
});
afterAll(async () => {
  for (const r of running) await r.close();
  await issuer.stop();
});

function authDoc(anonymous: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apiserver.config.orch.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: issuer.url, certificateAuthority: issuer.pki.caPem, audiences: ['orchd'] },
        claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }],
        claimMappings: { username: { claim: 'sub', prefix: 'oidc:' }, groups: { claim: 'groups', prefix: '' } },
        ...extra,
      },
    ],
    anonymous,
  };
}

async function start(name: string, doc: unknown, files: Partial<ServerConfigFiles> = {}, more: Partial<ServeOptions> = {}): Promise<{ server: Running; dataDir: string; file: string }> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, stringify(doc));
  const loaded = loadServerConfig({ authentication: file, ...files });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  const dataDir = join(dir, `${name}-data`);
  const server = await startServer({ dataDir, config: loaded.config, policyStatus: true, ...more });
  running.push(server);
  return { server, dataDir, file };
}

const kubectl = (args: string[]) => runKubectl(args, { binary: versionedKubectl('1.33'), env: { KUBECONFIG: join(dir, 'no-kubeconfig'), HOME: dir } });

const validClaims = { hd: 'example.com', groups: ['dev'] };

describe('orchd with an authentication configuration', () => {
  let base: string;
  let ca: Buffer;
  let dataDir: string;

  beforeAll(async () => {
    const s = await start('main', authDoc({ enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }, { path: '/healthz' }] }));
    base = s.server.url;
    dataDir = s.dataDir;
    ca = await readFile(join(dataDir, 'apiserver.crt'));
  });

  it('serves HTTPS with a self-signed certificate kept in the data folder, covering 127.0.0.1 and localhost', () => {
    expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const leaf = new X509Certificate(ca);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(existsSync(join(dataDir, 'apiserver.key'))).toBe(true);
  });

  it('lets a valid token in', async () => {
    const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token({ claims: validClaims })}` });
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('ValidatingAdmissionPolicyList');
  });

  it('answers every kind of bad token with the 401 Status', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bad = {
      expired: await issuer.token({ claims: { ...validClaims, exp: now - 60 } }),
      notYetValid: await issuer.token({ claims: { ...validClaims, nbf: now + 3600 } }),
      wrongAudience: await issuer.token({ claims: { ...validClaims, aud: ['kubernetes'] } }),
      wrongIssuer: await issuer.token({ claims: { ...validClaims, iss: 'https://issuer.example' } }),
      badSignature: await issuer.token({ claims: validClaims, foreignKey: true }),
      missingRequiredClaim: await issuer.token({ claims: { groups: ['dev'] } }),
      wrongRequiredClaim: await issuer.token({ claims: { ...validClaims, hd: 'evil.example' } }),
      garbage: 'not-a-token',
    };
    for (const [name, token] of Object.entries(bad)) {
      const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${token}` });
      expect({ name, status: r.status, body: r.body }).toEqual({ name, status: 401, body: UNAUTHORIZED });
    }
  });

  it('refuses requests without credentials except on the anonymous paths', async () => {
    expect((await httpsCall(base, ca, 'GET', VAP)).body).toEqual(UNAUTHORIZED);
    expect((await httpsCall(base, ca, 'GET', '/api')).status).toBe(401);
    expect((await httpsCall(base, ca, 'GET', '/livez')).text).toBe('ok');
    expect((await httpsCall(base, ca, 'GET', '/readyz')).status).toBe(200);
    // A bad token is refused even on an anonymous path.
    expect((await httpsCall(base, ca, 'GET', '/livez', { authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('kubectl works with --token and --certificate-authority, and reports a bad token', async () => {
    const token = await issuer.token({ claims: validClaims });
    const created = await httpsCall(
      base,
      ca,
      'POST',
      VAP,
      { authorization: `Bearer ${token}` },
      {
        apiVersion: 'admissionregistration.orch.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'authn-demo' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] }] },
          validations: [{ expression: 'true' }],
        },
      },
    );
    expect(created.status, created.text).toBe(201);
    const common = ['--server', base, '--certificate-authority', join(dataDir, 'apiserver.crt'), '--cache-dir', join(dir, 'kube-cache')];
    const ok = await kubectl([...common, '--token', token, 'get', 'validatingadmissionpolicies']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/NAME[\s\S]*authn-demo/);

    const bad = await kubectl([...common, '--token', await issuer.token({ claims: validClaims, foreignKey: true }), 'get', 'validatingadmissionpolicies']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Unauthorized/);

    // Without the CA, kubectl does not trust the self-signed certificate.
    const untrusted = await kubectl(['--server', base, '--cache-dir', join(dir, 'kube-cache-2'), '--token', token, 'get', 'validatingadmissionpolicies']);
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toMatch(/certificate/);
  });
  it('accepts tokens signed with a rotated key once it has fetched the new key set', async () => {
    const before = issuer.jwksFetches;
    // Past the server's refetch cooldown (1 s) since its last fetch.
    await sleep(1100);
    await issuer.rotate('rotated-1');
    const r = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token({ claims: validClaims })}` });
    expect(r.status).toBe(200);
    expect(issuer.jwksFetches).toBe(before + 1);
    // A token under the old kid (no longer published) is refused.
    const stale = await httpsCall(base, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token({ claims: validClaims, foreignKey: true })}` });
    expect(stale.status).toBe(401);
  });
});

describe('serving certificate and anonymous settings', () => {
  it('reuses the self-signed certificate across restarts', async () => {
    const first = await start('restart', authDoc({ enabled: false }));
    const cert = await readFile(join(first.dataDir, 'apiserver.crt'), 'utf8');
    await first.server.close();
    running.splice(running.indexOf(first.server), 1);
    const second = await start('restart', authDoc({ enabled: false }));
    expect(await readFile(join(second.dataDir, 'apiserver.crt'), 'utf8')).toBe(cert);
    // anonymous disabled: even the health endpoints need credentials, as in kube-apiserver.
    const r = await httpsCall(second.server.url, cert, 'GET', '/livez');
    expect(r.body).toEqual(UNAUTHORIZED);
    const ok = await httpsCall(second.server.url, cert, 'GET', '/livez', { authorization: `Bearer ${await issuer.token({ claims: validClaims })}` });
    expect(ok.status).toBe(200);
    // A WebSocket watch is authenticated too: refused before the upgrade without credentials.
    const wsUrl = `${second.server.url.replace('https', 'wss')}${VAP}?watch=true`;
    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(wsUrl, { ca: cert });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('upgraded without credentials')));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    const token = await issuer.token({ claims: validClaims });
    const opened = await new Promise<boolean>((resolve) => {
      // The token rides in a subprotocol, next to the real one (which the server echoes).
      const ws = new WebSocket(wsUrl, [`base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`, 'base64.binary.k8s.io'], { ca: cert });
      ws.on('open', () => {
        ws.close();
        resolve(true);
      });
      ws.on('unexpected-response', () => resolve(false));
      ws.on('error', () => resolve(false));
    });
    expect(opened).toBe(true);
  });

  it('serves the given --tls-cert-file pair instead of generating one', async () => {
    const certFile = join(dir, 'given.crt');
    const keyFile = join(dir, 'given.key');
    await writeFile(certFile, issuer.pki.cert);
    await writeFile(keyFile, issuer.pki.key);
    const s = await start('given', authDoc({ enabled: true }), { tlsCertFile: certFile, tlsPrivateKeyFile: keyFile });
    expect(existsSync(join(s.dataDir, 'apiserver.crt'))).toBe(false);
    // Trusted through the issuer's CA, which signed the given certificate; anonymous allowed everywhere.
    const r = await httpsCall(s.server.url, issuer.pki.caPem, 'GET', VAP);
    expect(r.status).toBe(200);
  });

  it('refuses to start when an expression does not compile, naming the field, and runs CEL rules when they do', async () => {
    await expect(start('cel-bad', authDoc({ enabled: true }, { claimValidationRules: [{ expression: 'claims.hd ==', message: 'hd' }] }))).rejects.toThrow(
      /jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value/,
    );
    const s = await start('cel', authDoc({ enabled: false }, { userValidationRules: [{ expression: "'dev' in user.groups", message: 'developers only' }] }));
    const ca = await readFile(join(s.dataDir, 'apiserver.crt'));
    const dev = await httpsCall(s.server.url, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token({ claims: validClaims })}` });
    expect(dev.status).toBe(200);
    const ops = await httpsCall(s.server.url, ca, 'GET', VAP, { authorization: `Bearer ${await issuer.token({ claims: { ...validClaims, groups: ['ops'] } })}` });
    expect(ops.body).toEqual(UNAUTHORIZED);
  });

  it('stays on plain HTTP without configuration on loopback', async () => {
    const s = await startServer();
    try {
      expect(s.url).toMatch(/^http:\/\//);
      expect((await call(s.url, 'GET', VAP, undefined, { authorization: 'Bearer anything' })).status).toBe(200);
      expect(existsSync(join(s.dataDir, 'apiserver.crt'))).toBe(false);
    } finally {
      await s.stop();
    }
  });
});

describe('reloading the authentication configuration', () => {
  const until = (what: string, check: () => Promise<boolean>) => eventually(check, { stepMs: 50, what });

  it('swaps in a changed valid file, and keeps the last good one when the new file is invalid or its issuer unreachable', async () => {
    const s = await start('reload', authDoc({ enabled: false }), {}, { authenticationReloadIntervalMs: 100 });
    const ca = await readFile(join(s.dataDir, 'apiserver.crt'));
    const later = await issuer.token({ claims: { ...validClaims, aud: ['later'] } });
    const get = async () => (await httpsCall(s.server.url, ca, 'GET', VAP, { authorization: `Bearer ${later}` })).status;
    const gauge = async (name: string) => {
      const text = (await httpsCall(s.server.url, ca, 'GET', '/metrics', { authorization: `Bearer ${later}` })).text;
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    };
    expect(await get()).toBe(401);

    const widened = authDoc({ enabled: false });
    Object.assign(widened.jwt[0]!.issuer, { audiences: ['orchd', 'later'], audienceMatchPolicy: 'MatchAny' });
    await replaceFile(s.file, stringify(widened));
    await until('the widened audiences', async () => (await get()) === 200);
    expect(await gauge('orchd_authentication_config_reloads_succeeded')).toBe(1);

    // Breaks a rule: the server keeps the widened configuration.
    const invalid = authDoc({ enabled: false });
    Object.assign(invalid.jwt[0]!.issuer, { audiences: [] });
    const failedBefore = await gauge('orchd_authentication_config_reloads_failed');
    await replaceFile(s.file, stringify(invalid));
    await until('the failed reload', async () => (await gauge('orchd_authentication_config_reloads_failed')) > failedBefore);
    expect(await gauge('orchd_authentication_config_last_reload_success')).toBe(0);
    expect(await get()).toBe(200);

    // Valid but its issuer cannot be discovered: not swapped in either.
    const unreachable = authDoc({ enabled: false });
    Object.assign(unreachable.jwt[0]!.issuer, { url: 'https://127.0.0.1:1' });
    await replaceFile(s.file, stringify(unreachable));
    await until('the second failed reload', async () => (await gauge('orchd_authentication_config_reloads_failed')) > failedBefore + 1);
    expect(await get()).toBe(200);
  });
});
