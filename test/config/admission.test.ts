import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admissionDocument } from '../../src/config/admission.js';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { credentialsFor } from '../../src/config/webhook-admission.js';
import { check, makeCertificate, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const pair = makeCertificate(dir);
const kubeconfig = writeFile(
  dir,
  'webhooks.kubeconfig',
  `apiVersion: v1
kind: Config
users:
- name: 127.0.0.1:8443
  user:
    token: exact-token
- name: '*.webhooks.example.com'
  user:
    client-certificate: server.crt
    client-key: ${pair.key}
- name: hooks.example.com
  user:
    username: admission
    password: secret
- name: '*'
  user:
    tokenFile: token.txt
- name: fallback
  user:
    token: current-context-token
contexts:
- name: main
  context: { cluster: none, user: fallback }
current-context: main
`,
);
writeFile(dir, 'token.txt', 'star-token\n');
const webhookConfig = `apiVersion: apiserver.config.orch.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: ${kubeconfig}\n`;
writeFile(dir, 'mutating.yaml', webhookConfig);
writeFile(dir, 'relative.yaml', 'apiVersion: apiserver.config.orch.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: webhooks.kubeconfig\n');
writeFile(dir, 'broken.yaml', 'a: [\n');
writeFile(dir, 'list.yaml', '- a\n- b\n');
writeFile(dir, 'not-yaml.txt', 'a: [\n');
const configFile = join(dir, 'admission.yaml');

/** A kubeconfig with one user, written to its own file. */
let kubeconfigs = 0;
const oneUser = (user: string): string => writeFile(dir, `user-${++kubeconfigs}.kubeconfig`, `apiVersion: v1\nkind: Config\nusers:\n- name: hook\n  user:\n${user.replace(/^/gm, '    ')}\n`);

const doc = (plugins: unknown[]) => ({ apiVersion: V1, kind: 'AdmissionConfiguration', plugins });
const webhook = (over: Record<string, unknown> = {}) => ({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig, ...over });
const mutating = (configuration: unknown) => [{ name: 'MutatingAdmissionWebhook', configuration }];
const KCF = 'plugins[0].configuration.kubeConfigFile';

const rows: { name: string; plugins: unknown[]; want: [string, string][] }[] = [
  { name: 'no plugins', plugins: [], want: [] },
  { name: 'inline configuration', plugins: mutating(webhook()), want: [] },
  { name: 'configuration from a relative path', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'mutating.yaml' }], want: [] },
  { name: 'a plugin with no configuration', plugins: [{ name: 'ValidatingAdmissionPolicy' }], want: [] },
  { name: 'name missing', plugins: [{ configuration: webhook() }], want: [['FieldValueRequired', 'plugins[0].name']] },
  { name: 'a plugin orchd does not have', plugins: [{ name: 'PodSecurity' }], want: [['FieldValueNotSupported', 'plugins[0].name']] },
  { name: 'a plugin twice', plugins: [{ name: 'MutatingAdmissionPolicy' }, { name: 'MutatingAdmissionPolicy' }], want: [['FieldValueDuplicate', 'plugins[1].name']] },
  { name: 'path to a missing file', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'none.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'path to a broken file', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'broken.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'path to a file that is not an object', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'list.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'inline configuration wins over a missing path', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'none.yaml', configuration: webhook() }], want: [] },
  { name: 'configuration not an object', plugins: [{ name: 'MutatingAdmissionWebhook', configuration: 'kubeConfigFile: /x' }], want: [['FieldValueTypeInvalid', 'plugins[0].configuration']] },
  // What Kubernetes does with the policy plugins' configuration: nothing (they are built without reading it).
  { name: 'ValidatingAdmissionPolicy: any configuration is ignored', plugins: [{ name: 'ValidatingAdmissionPolicy', configuration: { anything: ['goes'] } }], want: [] },
  { name: 'MutatingAdmissionPolicy: a file that is not YAML is not parsed', plugins: [{ name: 'MutatingAdmissionPolicy', path: 'not-yaml.txt' }], want: [] },
  { name: 'ValidatingAdmissionPolicy: a path must still be readable', plugins: [{ name: 'ValidatingAdmissionPolicy', path: 'none.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  // WebhookAdmissionConfiguration
  { name: 'webhook: kind missing', plugins: mutating(webhook({ kind: undefined })), want: [['FieldValueRequired', 'plugins[0].configuration.kind']] },
  { name: 'webhook: another kind', plugins: mutating(webhook({ kind: 'ResourceQuotaConfiguration' })), want: [['FieldValueNotSupported', 'plugins[0].configuration.kind']] },
  { name: 'webhook: apiVersion missing', plugins: mutating(webhook({ apiVersion: undefined })), want: [['FieldValueRequired', 'plugins[0].configuration.apiVersion']] },
  { name: 'webhook: another apiVersion', plugins: mutating(webhook({ apiVersion: V1BETA1 })), want: [['FieldValueNotSupported', 'plugins[0].configuration.apiVersion']] },
  { name: 'webhook: an unknown field', plugins: mutating(webhook({ kubeconfig: '/x' })), want: [['FieldValueForbidden', 'plugins[0].configuration.kubeconfig']] },
  { name: 'webhook: kubeConfigFile not a string', plugins: mutating(webhook({ kubeConfigFile: 7 })), want: [['FieldValueTypeInvalid', KCF]] },
  { name: 'webhook: kubeConfigFile missing', plugins: mutating(webhook({ kubeConfigFile: undefined })), want: [['FieldValueInvalid', KCF]] },
  { name: 'webhook: kubeConfigFile relative', plugins: mutating(webhook({ kubeConfigFile: 'webhooks.kubeconfig' })), want: [['FieldValueInvalid', KCF]] },
  { name: 'webhook: kubeConfigFile missing on disk', plugins: mutating(webhook({ kubeConfigFile: join(dir, 'none.kubeconfig') })), want: [['FieldValueInvalid', KCF]] },
  { name: 'webhook: staticManifestsDir needs a feature gate', plugins: mutating(webhook({ staticManifestsDir: dir })), want: [['FieldValueForbidden', 'plugins[0].configuration.staticManifestsDir']] },
  { name: 'webhook: errors of a file are given at path', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'relative.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  // the kubeconfig it names
  { name: 'kubeconfig: a certificate without its key', plugins: mutating(webhook({ kubeConfigFile: oneUser(`client-certificate: ${pair.cert}`) })), want: [['FieldValueInvalid', KCF]] },
  {
    name: 'kubeconfig: a key that is not the certificate’s',
    plugins: mutating(webhook({ kubeConfigFile: oneUser(`client-certificate: ${pair.cert}\nclient-key: ${pair.otherKey}`) })),
    want: [['FieldValueInvalid', KCF]],
  },
  {
    name: 'kubeconfig: a certificate file that is missing',
    plugins: mutating(webhook({ kubeConfigFile: oneUser(`client-certificate: none.crt\nclient-key: ${pair.key}`) })),
    want: [['FieldValueInvalid', KCF]],
  },
  { name: 'kubeconfig: token and basic auth together', plugins: mutating(webhook({ kubeConfigFile: oneUser('token: t\nusername: u\npassword: p') })), want: [['FieldValueInvalid', KCF]] },
  { name: 'kubeconfig: a token file that is missing', plugins: mutating(webhook({ kubeConfigFile: oneUser('tokenFile: none.txt') })), want: [['FieldValueInvalid', KCF]] },
  { name: 'kubeconfig: an exec plugin', plugins: mutating(webhook({ kubeConfigFile: oneUser('exec: { command: get-token }') })), want: [['FieldValueInvalid', KCF]] },
  { name: 'kubeconfig: impersonation', plugins: mutating(webhook({ kubeConfigFile: oneUser('token: t\nas: admin') })), want: [['FieldValueInvalid', KCF]] },
  { name: 'kubeconfig: not YAML', plugins: mutating(webhook({ kubeConfigFile: join(dir, 'not-yaml.txt') })), want: [['FieldValueInvalid', KCF]] },
];

describe('AdmissionConfiguration validation', () => {
  it.each(rows)('$name', ({ plugins, want }) => {
    expect(check(admissionDocument, doc(plugins), configFile).errors).toEqual(want);
  });

  it('words a kubeconfig problem with the kubeconfig’s own field path', () => {
    const file = oneUser(`client-certificate: ${pair.cert}`);
    expect(check(admissionDocument, doc(mutating(webhook({ kubeConfigFile: file }))), configFile).messages).toEqual([
      `${KCF}: Invalid value: ${JSON.stringify(file)}: users[0].user.client-key: Required value: client-key-data or client-key must be specified for hook to use the clientCert authentication method`,
    ]);
    expect(check(admissionDocument, doc([{ name: 'MutatingAdmissionWebhook', path: 'relative.yaml' }]), configFile).messages).toEqual([
      `plugins[0].path: Invalid value: ${JSON.stringify(join(dir, 'relative.yaml'))}: kubeConfigFile: Invalid value: "webhooks.kubeconfig": must be an absolute file path`,
    ]);
  });

  it('reads the webhook plugin’s configuration from its file or inline, to the same credentials', () => {
    const fromFile = check(admissionDocument, doc([{ name: 'MutatingAdmissionWebhook', path: 'mutating.yaml' }]), configFile).value!;
    const fromInline = check(admissionDocument, doc(mutating(webhook())), configFile).value!;
    expect(fromFile.plugins[0].path).toBe(join(dir, 'mutating.yaml'));
    expect(fromInline.plugins[0].path).toBeUndefined();
    for (const v of [fromFile, fromInline]) expect(credentialsFor(v.plugins[0].webhookAdmission!, '127.0.0.1:8443')).toEqual({ token: 'exact-token' });
  });

  it('picks credentials by host as Kubernetes does: exact, *.suffix, without :443, *, then the current context', () => {
    const config = check(admissionDocument, doc(mutating(webhook())), configFile).value!.plugins[0].webhookAdmission!;
    const creds = (hostPort: string) => credentialsFor(config, hostPort);
    expect(creds('127.0.0.1:8443')).toEqual({ token: 'exact-token' });
    const cert = creds('a.webhooks.example.com:443');
    expect(cert?.cert?.toString()).toBe(pair.certPem);
    expect(cert?.key?.toString()).toContain('PRIVATE KEY');
    expect(creds('hooks.example.com:443')).toEqual({ username: 'admission', password: 'secret' });
    // names without a port only stand for port 443: elsewhere the `*` user answers
    expect(creds('hooks.example.com:8443')).toEqual({ token: 'star-token' });
    expect(creds('a.webhooks.example.com:9443')).toEqual({ token: 'star-token' });
    const noStar = check(admissionDocument, doc(mutating(webhook({ kubeConfigFile: oneUser('token: only') }))), configFile).value!.plugins[0].webhookAdmission!;
    expect(credentialsFor(noStar, 'elsewhere:443')).toBeUndefined();
  });

  it('falls back to the current context’s user when no user is named for the host', () => {
    const file = writeFile(dir, 'current.kubeconfig', 'users:\n- name: me\n  user: { token: mine }\ncontexts:\n- name: c\n  context: { user: me }\ncurrent-context: c\n');
    const config = check(admissionDocument, doc(mutating(webhook({ kubeConfigFile: file }))), configFile).value!.plugins[0].webhookAdmission!;
    expect(credentialsFor(config, 'anywhere:443')).toEqual({ token: 'mine' });
  });

  it('exists only in apiserver.config.orch.io/v1', () => {
    expect(check(admissionDocument, { ...doc([]), apiVersion: V1BETA1 }, configFile).errors).toEqual([['FieldValueNotSupported', 'apiVersion']]);
  });
});
