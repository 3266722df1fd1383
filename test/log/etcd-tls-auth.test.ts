/**
 * The etcd log through TLS with client certificates and through etcd's own users (auth tokens):
 * both clients of the log (the lean one for transactions and the watch, etcd3 for the rest) are
 * configured from the same options.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdLog } from '../../src/log/etcd/etcd-log.js';
import type { LogEntry } from '../../src/log/log.js';
import { makeEtcdTls, TestEtcd, type EtcdTls } from '../helpers/etcd.js';
import { eventually, sleep } from '../helpers/poll.js';
import { tempDir } from '../helpers/temp.js';
import { call } from '../helpers/server.js';
import { isReady, spawnServer } from '../server/child.js';

const role = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });

/** `orchd serve --storage etcd` with more flags: ready, a Namespace created through it, then stopped. */
async function serveAndCreate(etcdUrl: string, flags: string[]): Promise<number> {
  const child = await spawnServer(tempDir('orchd-etcd-flags-', { until: 'file' }), ['--storage', 'etcd', '--etcd-servers', etcdUrl, ...flags], { lifeMs: 120_000 });
  try {
    await child.waitForLine(isReady, 60_000);
    return (await call(child.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'through-flags' } })).status;
  } finally {
    child.signal('SIGTERM');
    await child.exited;
  }
}

/** Opens a log, writes one object and waits until the watch brought it back: the Txn and the watch both went through. */
async function roundTrip(log: EtcdLog, name: string): Promise<number> {
  await log.open();
  const seen: LogEntry[] = [];
  const sub = log.committed$.subscribe((b) => seen.push(...b));
  try {
    const seq = await log.append({ type: 'put', key: `/configmaps/default/${name}`, value: role(name), expect: 0 }).durable;
    await eventually(() => seen.some((e) => e.seq === seq));
    return seq;
  } finally {
    sub.unsubscribe();
  }
}

describe('etcd over TLS with client certificates', () => {
  let etcd: TestEtcd;
  let tls: EtcdTls;
  beforeAll(async () => {
    tls = makeEtcdTls(tempDir('orchd-etcd-tls-', { until: 'file' }));
    etcd = await TestEtcd.startWith({ tls });
  }, 60_000);
  afterAll(() => etcd?.destroy());

  it('with the CA and a client certificate, writes and watches go through; without the certificate, opening fails', async () => {
    const ca = readFileSync(tls.caFile);
    const log = new EtcdLog({ servers: [etcd.url], prefix: '/tls/', dir: tempDir(), tls: { ca, cert: readFileSync(tls.clientCertFile), key: readFileSync(tls.clientKeyFile) } });
    try {
      expect(await roundTrip(log, 'a')).toBeGreaterThan(0);
    } finally {
      await log.close();
    }
    const anonymous = new EtcdLog({ servers: [etcd.url], prefix: '/tls/', dir: tempDir(), tls: { ca } });
    await expect(anonymous.open()).rejects.toThrow();
  });

  it('orchd serve takes them as --etcd-cafile, --etcd-certfile and --etcd-keyfile', async () => {
    expect(await serveAndCreate(etcd.url, ['--etcd-cafile', tls.caFile, '--etcd-certfile', tls.clientCertFile, '--etcd-keyfile', tls.clientKeyFile])).toBe(201);
  }, 120_000);
});

describe('etcd with auth enabled', () => {
  let etcd: TestEtcd;
  beforeAll(async () => {
    // Tokens that expire after 1 s: a write after an idle pause must ask for a new one.
    etcd = await TestEtcd.startWith({ args: ['--auth-token', 'simple', '--auth-token-ttl', '1'] });
    const admin = new Etcd3({ hosts: etcd.url });
    try {
      await admin.user('root').create('root-pw');
      await admin.user('root').addRole('root');
      await admin.auth.authEnable({});
    } finally {
      admin.close();
    }
  }, 60_000);
  afterAll(() => etcd?.destroy());

  it('with a user and password, writes and watches go through, also after the token expired; without, opening fails', async () => {
    const log = new EtcdLog({ servers: [etcd.url], prefix: '/auth/', dir: tempDir(), auth: { username: 'root', password: 'root-pw' } });
    try {
      const first = await roundTrip(log, 'a');
      await sleep(3000);
      const seq = await log.append({ type: 'put', key: '/configmaps/default/b', value: role('b'), expect: 0 }).durable;
      expect(seq).toBeGreaterThan(first);
    } finally {
      await log.close();
    }
    const anonymous = new EtcdLog({ servers: [etcd.url], prefix: '/auth/', dir: tempDir() });
    await expect(anonymous.open()).rejects.toThrow();
  });

  it('orchd serve takes them as --etcd-username and --etcd-password-file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'password'), 'root-pw\n');
    expect(await serveAndCreate(etcd.url, ['--etcd-username', 'root', '--etcd-password-file', join(dir, 'password')])).toBe(201);
  }, 120_000);
});
