/**
 * The client connection file of a webhook authorizer: where the webhook is (the current context's
 * cluster, or the only one, over https) and how orchd proves itself (its user's certificate or
 * token), read with the kubeconfig rules of src/config/kubeconfig.ts; every refusal names the file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readClientConnection } from '../../src/auth/kubeconfig.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('orchd-kubeconfig-');
let n = 0;
const file = (text: string): string => {
  const f = join(dir, `k${++n}.yaml`);
  writeFileSync(f, text);
  return f;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('readClientConnection', () => {
  it('takes the current context’s cluster and user: server, CA, token, TLS server name', () => {
    writeFileSync(join(dir, 'ca.pem'), 'CA PEM');
    const f = file(`apiVersion: v1
kind: Config
current-context: b
contexts:
- {name: a, context: {cluster: one, user: u1}}
- {name: b, context: {cluster: two, user: u2}}
clusters:
- {name: one, cluster: {server: "https://one.example:1"}}
- {name: two, cluster: {server: "https://two.example:2/authorize", certificate-authority: ca.pem, tls-server-name: webhook}}
users:
- {name: u1, user: {token: one}}
- {name: u2, user: {token: two}}
`);
    expect(readClientConnection(f)).toEqual({ server: new URL('https://two.example:2/authorize'), ca: Buffer.from('CA PEM'), token: 'two', servername: 'webhook', insecureSkipTLSVerify: false });
  });

  it('without a current context takes the only cluster and user, inline data included', () => {
    const f = file(`clusters:\n- {name: c, cluster: {server: "https://x:1", certificate-authority-data: ${b64('CA')}, insecure-skip-tls-verify: true}}\n`);
    expect(readClientConnection(f)).toEqual({ server: new URL('https://x:1'), ca: Buffer.from('CA'), insecureSkipTLSVerify: true });
  });

  it('refuses what cannot name one https server, naming the file', () => {
    expect(() => readClientConnection(file('clusters:\n- {name: c, cluster: {}}\n'))).toThrow(/k\d+\.yaml: the cluster has no server$/);
    expect(() => readClientConnection(file('clusters:\n- {name: c, cluster: {server: "http://x:1"}}\n'))).toThrow(/: the cluster server http:\/\/x:1 must use https$/);
    expect(() => readClientConnection(file('clusters:\n- {name: c, cluster: {server: "https://"}}\n'))).toThrow(/is not a URL$/);
    expect(() => readClientConnection(file('current-context: gone\nclusters:\n- {name: c, cluster: {server: "https://x:1"}}\n'))).toThrow(/: context "gone" not found$/);
    expect(() => readClientConnection(file('clusters:\n- {name: a, cluster: {server: "https://a:1"}}\n- {name: b, cluster: {server: "https://b:1"}}\n'))).toThrow(
      /: no current-context, and 2 clusters to choose from$/,
    );
    expect(() => readClientConnection(file(`clusters:\n- {name: c, cluster: {server: "https://x:1"}}\nusers:\n- {name: u, user: {client-certificate-data: ${b64('C')}}}\n`))).toThrow(
      /: users\[0\]\.user\.client-key: Required value: client-key-data or client-key must be specified for u to use the clientCert authentication method$/,
    );
    expect(() => readClientConnection(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml: unable to read the file: no such file or directory$/);
  });
});
