import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admissionDocument } from '../../src/config/admission.js';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { check, tempDir, writeFile } from './support.js';

const dir = tempDir();
const webhookConfig = 'apiVersion: apiserver.config.orch.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: /etc/orchd/webhook.kubeconfig\n';
writeFile(dir, 'mutating.yaml', webhookConfig);
writeFile(dir, 'broken.yaml', 'a: [\n');
writeFile(dir, 'list.yaml', '- a\n- b\n');
const configFile = join(dir, 'admission.yaml');

const doc = (plugins: unknown[]) => ({ apiVersion: V1, kind: 'AdmissionConfiguration', plugins });
const inline = { apiVersion: 'apiserver.config.orch.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: '/x' };

const rows: { name: string; plugins: unknown[]; want: [string, string][] }[] = [
  { name: 'no plugins', plugins: [], want: [] },
  { name: 'inline configuration', plugins: [{ name: 'MutatingAdmissionWebhook', configuration: inline }], want: [] },
  { name: 'configuration from a relative path', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'mutating.yaml' }], want: [] },
  { name: 'a plugin with no configuration', plugins: [{ name: 'ValidatingAdmissionPolicy' }], want: [] },
  { name: 'name missing', plugins: [{ configuration: inline }], want: [['FieldValueRequired', 'plugins[0].name']] },
  { name: 'a plugin orchd does not have', plugins: [{ name: 'PodSecurity' }], want: [['FieldValueNotSupported', 'plugins[0].name']] },
  { name: 'a plugin twice', plugins: [{ name: 'MutatingAdmissionPolicy' }, { name: 'MutatingAdmissionPolicy' }], want: [['FieldValueDuplicate', 'plugins[1].name']] },
  { name: 'path to a missing file', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'none.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'path to a broken file', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'broken.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'path to a file that is not an object', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'list.yaml' }], want: [['FieldValueInvalid', 'plugins[0].path']] },
  { name: 'inline configuration wins over a missing path', plugins: [{ name: 'MutatingAdmissionWebhook', path: 'none.yaml', configuration: inline }], want: [] },
  { name: 'configuration not an object', plugins: [{ name: 'MutatingAdmissionWebhook', configuration: 'kubeConfigFile: /x' }], want: [['FieldValueTypeInvalid', 'plugins[0].configuration']] },
];

describe('AdmissionConfiguration validation', () => {
  it.each(rows)('$name', ({ plugins, want }) => {
    expect(check(admissionDocument, doc(plugins), configFile).errors).toEqual(want);
  });

  it('reads a plugin configuration from its file or inline, to the same form', () => {
    const fromFile = check(admissionDocument, doc([{ name: 'MutatingAdmissionWebhook', path: 'mutating.yaml' }]), configFile).value;
    expect(fromFile).toEqual({
      plugins: [{ name: 'MutatingAdmissionWebhook', path: join(dir, 'mutating.yaml'), configuration: { ...inline, kubeConfigFile: '/etc/orchd/webhook.kubeconfig' } }],
    });
    const fromInline = check(admissionDocument, doc([{ name: 'MutatingAdmissionWebhook', configuration: inline }]), configFile).value;
    expect(fromInline).toEqual({ plugins: [{ name: 'MutatingAdmissionWebhook', configuration: inline }] });
  });

  it('exists only in apiserver.config.orch.io/v1', () => {
    expect(check(admissionDocument, { ...doc([]), apiVersion: V1BETA1 }, configFile).errors).toEqual([['FieldValueNotSupported', 'apiVersion']]);
  });
});
