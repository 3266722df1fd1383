import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from './built-cli.js';
import { makeCertificate, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/poll.js';

/*
 * `orchd serve` with configuration files, as a user runs it: a bad set stops it at start with every
 * error on stderr and exit status 1, before it opens its data folder or a port; a good set starts it.
 */

interface Run {
  pid: number;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
  kill: (sig: NodeJS.Signals) => void;
}
const running = new Set<Run>();

function run(cli: string, args: string[], cwd: string): Run {
  const proc = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const kill = (sig: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid!, sig);
  };
  // Whatever happens, the child does not outlive the test file.
  const limit = setTimeout(() => kill('SIGKILL'), 30_000);
  const r: Run = {
    pid: proc.pid!,
    stderr: () => stderr,
    stdout: () => stdout,
    exited: new Promise((resolve) =>
      proc.on('close', (code) => {
        clearTimeout(limit);
        running.delete(r);
        resolve(code);
      }),
    ),
    kill,
  };
  running.add(r);
  return r;
}

let cli: string;
let dir: string;
beforeAll(async () => {
  cli = await builtCli();
  dir = tempDir();
}, 120_000);
afterAll(async () => {
  for (const r of [...running]) r.kill('SIGKILL');
  await Promise.all([...running].map((r) => r.exited));
});

const key32 = Buffer.alloc(32, 3).toString('base64');

describe('orchd serve with configuration files', () => {
  it('stops at start with every error of every file, one per line, and exit status 1', async () => {
    const auth = writeFile(
      dir,
      'bad-auth.yaml',
      `apiVersion: apiserver.config.orch.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "http://issuer.example.com", audiences: [orchd]}
  claimMappings:
    username: {claim: sub}
`,
    );
    const authz = writeFile(
      dir,
      'bad-authz.json',
      JSON.stringify({
        apiVersion: 'apiserver.orch.io/v1beta1',
        kind: 'AuthorizationConfiguration',
        authorizers: [
          {
            type: 'Webhook',
            name: 'Hook',
            webhook: { timeout: '45s', authorizedTTL: '5m', unauthorizedTTL: '30s', subjectAccessReviewVersion: 'v1', failurePolicy: 'Deny', connectionInfo: { type: 'InClusterConfig' } },
          },
        ],
      }),
    );
    const enc = writeFile(
      dir,
      'bad-enc.yaml',
      `apiVersion: apiserver.config.orch.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["*.*"]
  providers: [{identity: {}}]
- resources: [secrets]
  providers: [{secretbox: {keys: [{name: k, secret: "${Buffer.alloc(16).toString('base64')}"}]}}]
`,
    );
    const tracing = writeFile(dir, 'bad-tracing.yaml', 'apiVersion: apiserver.orch.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n');
    const dataDir = join(dir, 'data-bad');
    const r = run(
      cli,
      [
        'serve',
        '--port',
        '0',
        '--bind-address',
        '127.0.0.1',
        '--data-dir',
        dataDir,
        '--authentication-config',
        auth,
        '--authorization-config',
        authz,
        '--encryption-provider-config',
        enc,
        '--tracing-config-file',
        tracing,
        '--egress-selector-config-file',
        join(dir, 'missing.yaml'),
      ],
      dir,
    );
    expect(await r.exited).toBe(1);
    expect(r.stderr().split('\n').filter(Boolean)).toEqual([
      `${auth}: jwt[0].issuer.url: Invalid value: "http://issuer.example.com": URL scheme must be https`,
      `${auth}: jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`,
      `${authz}: authorizers[0].name: Invalid value: "Hook": authorizer name is invalid: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      `${authz}: authorizers[0].webhook.timeout: Invalid value: "45s": must be > 0s and <= 30s`,
      `${enc}: resources[1].resources[0]: Invalid value: "secrets": resource "secrets" is masked by earlier rule "*.*"`,
      `${enc}: resources[1].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]`,
      `${join(dir, 'missing.yaml')}: unable to read the file: no such file or directory`,
      `${tracing}: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million`,
      'orchd: 8 error(s) in the configuration files; not starting',
    ]);
    // Nothing was started: no data folder, no log line.
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a certificate without its key', async () => {
    const { cert } = makeCertificate(tempDir());
    const r = run(cli, ['serve', '--port', '0', '--data-dir', join(dir, 'data-cert'), '--tls-cert-file', cert], dir);
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toContain(`${cert}: --tls-private-key-file is required with --tls-cert-file\n`);
  });

  it('starts with a valid set of every kind of file, and stops on SIGTERM', async () => {
    const certs = makeCertificate(tempDir());
    // A webhook nobody listens for: the anonymous /livez below falls through it (NoOpinion) to AlwaysAllow.
    const connFile = writeFile(dir, 'webhook.kubeconfig', 'apiVersion: v1\nkind: Config\nclusters:\n- {name: authz, cluster: {server: "https://127.0.0.1:1/authorize"}}\n');
    writeFile(dir, 'mutating.yaml', `apiVersion: apiserver.config.orch.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: ${connFile}\n`);
    const files = {
      '--authentication-config': writeFile(
        dir,
        'auth.yaml',
        `apiVersion: apiserver.orch.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "https://issuer.example.com", audiences: [orchd]}
  claimMappings:
    username: {claim: sub, prefix: ""}
anonymous: {enabled: true, conditions: [{path: /livez}]}
`,
      ),
      '--authorization-config': writeFile(
        dir,
        'authz.yaml',
        `apiVersion: apiserver.config.orch.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: hook
  webhook: {timeout: 3s, authorizedTTL: 5m, unauthorizedTTL: 30s, subjectAccessReviewVersion: v1, failurePolicy: NoOpinion,
            connectionInfo: {type: KubeConfigFile, clusterConfigFile: ${connFile}}}
- {type: AlwaysAllow, name: everyone}
`,
      ),
      '--encryption-provider-config': writeFile(
        dir,
        'enc.json',
        JSON.stringify({
          apiVersion: 'apiserver.config.orch.io/v1',
          kind: 'EncryptionConfiguration',
          resources: [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'k1', secret: key32 }] } }, { identity: {} }] }],
        }),
      ),
      '--egress-selector-config-file': writeFile(
        dir,
        'egress.yaml',
        'apiVersion: apiserver.orch.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n- {name: cluster, connection: {proxyProtocol: Direct}}\n',
      ),
      '--tracing-config-file': writeFile(dir, 'tracing.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 100\n'),
      '--admission-control-config-file': writeFile(
        dir,
        'admission.yaml',
        'apiVersion: apiserver.config.orch.io/v1\nkind: AdmissionConfiguration\nplugins:\n- {name: MutatingAdmissionWebhook, path: mutating.yaml}\n',
      ),
      '--tls-cert-file': certs.cert,
      '--tls-private-key-file': certs.key,
    };
    const r = run(cli, ['serve', '--port', '0', '--bind-address', '127.0.0.1', '--data-dir', join(dir, 'data-good'), ...Object.entries(files).flat()], dir);
    await eventually(() => /"msg":"ready"/.test(r.stderr()), { timeoutMs: 20_000, what: () => `ready in: ${r.stderr()}` });
    const url = /"msg":"ready".*?"url":"([^"]+)"/.exec(r.stderr())?.[1];
    // The given pair is served over HTTPS; it names no address, so only its chain is checked here.
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const status = await new Promise<number>((resolve, reject) =>
      httpsGet(`${url}/livez`, { ca: certs.certPem, checkServerIdentity: () => undefined }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject),
    );
    expect(status).toBe(200);
    r.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  });

  it('lists the configuration flags in --help', async () => {
    const r = run(cli, ['serve', '--help'], dir);
    expect(await r.exited).toBe(0);
    for (const flag of [
      '--authentication-config',
      '--authorization-config',
      '--encryption-provider-config',
      '--egress-selector-config-file',
      '--tracing-config-file',
      '--admission-control-config-file',
      '--tls-cert-file',
      '--tls-private-key-file',
    ]) {
      expect(r.stdout()).toContain(flag);
    }
    // The help says which files are enforced and which are only validated, so no one is misled.
    expect(r.stdout()).toMatch(/Enforced: authentication and authorization[^\n]*encryption at rest, TLS,\s+egress selection, tracing, the admission configuration and the audit policy\./);
    expect(r.stdout()).not.toMatch(/not yet/);
  });
});
