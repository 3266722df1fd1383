/**
 * The core kinds controllers touch (ConfigMap, Secret, ServiceAccount, core Event) and the Lease,
 * through real clients: kubectl (create, apply, get, replace, delete) and @kubernetes/client-node's
 * typed CoreV1Api and KubernetesObjectApi, as a controller and its operator use them; and Secrets
 * sealed at rest when an EncryptionConfiguration names them.
 */
import { describe, expect, it } from 'vitest';
import { CoreV1Api, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { kubectlForFile } from '../helpers/kubectl.js';
import { kubeConfigFor } from '../helpers/client-node.js';
import { call, startServer } from '../helpers/server.js';
import { configOf, keyed, marker, onDisk, secret as key } from '../encryption/helpers.js';
import { tempDir } from '../helpers/temp.js';

const k = kubectlForFile();
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('kubectl', () => {
  it('create secret/configmap/serviceaccount, get them back, apply a Secret with stringData twice', async () => {
    const created = await k.kubectl(['create', 'secret', 'generic', 'creds', '--from-literal=user=admin', '-n', 'default']);
    expect(created.code, created.stderr).toBe(0);
    const cm = await k.kubectl(['create', 'configmap', 'settings', '--from-literal=mode=fast', '-n', 'default']);
    expect(cm.code, cm.stderr).toBe(0);
    expect((await k.kubectl(['create', 'serviceaccount', 'bot', '-n', 'default'])).code).toBe(0);
    const got = JSON.parse((await k.kubectl(['get', 'secret', 'creds', '-n', 'default', '-o', 'json'])).stdout);
    expect(got).toMatchObject({ type: 'Opaque', data: { user: b64('admin') } });
    const table = await k.kubectl(['get', 'cm,sa,secrets', '-n', 'default']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/configmap\/settings\s+1\s/);
    expect(table.stdout).toMatch(/secret\/creds\s+Opaque\s+1\s/);
    expect(table.stdout).toContain('serviceaccount/bot');
    const manifest = await k.file(
      'tls.yaml',
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: applied\n  namespace: default\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: CERT\n  tls.key: KEY\n',
    );
    for (let i = 0; i < 2; i++) {
      const applied = await k.kubectl(['apply', '-f', manifest]);
      expect(applied.code, applied.stderr).toBe(0);
    }
    const secret = JSON.parse((await k.kubectl(['get', 'secret', 'applied', '-n', 'default', '-o', 'json'])).stdout);
    expect(secret).toMatchObject({ type: 'kubernetes.io/tls', data: { 'tls.crt': b64('CERT'), 'tls.key': b64('KEY') } });
    const refused = await k.kubectl(['create', 'secret', 'tls', 'half', '-n', 'default', '--cert', manifest, '--key', manifest, '--dry-run=client', '-o', 'json']);
    expect(refused.code).not.toBe(0); // kubectl itself checks the pair; the server's 422 is tested over HTTP
  });

  it('get events shows core Events, and a Lease by its full name', async () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'bot.1', namespace: 'default' },
      involvedObject: { kind: 'ServiceAccount', name: 'bot', namespace: 'default' },
      reason: 'Tested',
      message: 'from kubectl test',
      type: 'Normal',
      count: 1,
      lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    expect((await call(k.server.url, 'POST', '/api/v1/namespaces/default/events', ev)).status).toBe(201);
    const events = await k.kubectl(['get', 'events', '-n', 'default']);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).toMatch(/Normal\s+Tested\s+serviceaccount\/bot\s+from kubectl test/);
    const lease = await k.file(
      'lease.yaml',
      'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: default\nspec:\n  holderIdentity: a\n  leaseDurationSeconds: 15\n',
    );
    expect((await k.kubectl(['apply', '-f', lease])).code).toBe(0);
    const leases = await k.kubectl(['get', 'leases.coordination.orch.io', '-n', 'default']);
    expect(leases.stdout).toMatch(/leader\s+a\s/);
    expect((await k.kubectl(['delete', 'leases.coordination.orch.io', 'leader', '-n', 'default'])).code).toBe(0);
  });
});

describe('client-node', () => {
  it('CoreV1Api: Secrets with stringData, ConfigMaps replaced, core Events created; KubernetesObjectApi: a Lease', async () => {
    const kc = kubeConfigFor(k.server.url);
    const core = kc.makeApiClient(CoreV1Api);
    const s = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'node-secret' }, stringData: { token: 't0k3n' } } });
    expect(s.data).toEqual({ token: b64('t0k3n') });
    expect(s.type).toBe('Opaque');
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'node-cm' }, data: { a: '1' } } });
    const replaced = await core.replaceNamespacedConfigMap({ name: 'node-cm', namespace: 'default', body: { ...cm, data: { a: '2' } } });
    expect(replaced.data).toEqual({ a: '2' });
    const ev = await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: `node-cm.${Date.now().toString(16)}` },
        involvedObject: { kind: 'ConfigMap', name: 'node-cm', namespace: 'default' },
        reason: 'Updated',
        message: 'a=2',
        type: 'Normal',
        source: { component: 'test' },
      },
    });
    expect(ev.metadata?.name).toMatch(/^node-cm\./);
    const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=node-cm' });
    expect(list.items.map((e) => e.reason)).toEqual(['Updated']);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const lease = (await objects.create({
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: { name: 'node-lease', namespace: 'default' },
      spec: { holderIdentity: 'me' },
    } as KubernetesObject)) as any;
    const renewed = (await objects.replace({ ...lease, spec: { ...lease.spec, renewTime: '2026-01-01T00:00:00.000000Z' } })) as any;
    expect(renewed.spec.renewTime).toBe('2026-01-01T00:00:00.000000Z');
  });
});

describe('encryption at rest', () => {
  it('a Secret named by the EncryptionConfiguration is sealed on disk; a ConfigMap is not', async () => {
    const dataDir = tempDir('orchd-secrets-', { until: 'file' });
    const config = await configOf(`apiVersion: apiserver.config.orch.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${keyed('aesgcm', ['key1', key(16)])}`);
    const server = await startServer({ dataDir, config });
    try {
      const hidden = marker();
      const shown = marker();
      expect(
        (await call(server.url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', annotations: { m: hidden } }, stringData: { v: hidden } }))
          .status,
      ).toBe(201);
      expect((await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { v: shown } })).status).toBe(201);
      expect((await call(server.url, 'GET', '/api/v1/namespaces/default/secrets/s')).body.data.v).toBe(b64(hidden));
      expect(await onDisk(dataDir, hidden)).toBe(false);
      expect(await onDisk(dataDir, b64(hidden))).toBe(false);
      expect(await onDisk(dataDir, shown)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
