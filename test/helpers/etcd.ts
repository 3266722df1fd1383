import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { Etcd3, type IOptions } from 'etcd3';
import { freePort } from './free-port.js';
import { removeDir, tempDir } from './temp.js';

/** Debian's etcd-server (installed by test/setup/system-packages.sh). */
export const ETCD_BINARY = process.env.ORCHD_TEST_ETCD ?? '/usr/bin/etcd';

/** PEM files: etcd's server certificate and key, the CA both sides trust, and a client's certificate and key. */
export interface EtcdTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl in dir. */
export function makeEtcdTls(dir: string): EtcdTls {
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const key = (n: string) => ssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f(n));
  key('ca.key');
  ssl('req', '-x509', '-new', '-key', f('ca.key'), '-subj', '/CN=orchd-test-ca', '-days', '2', '-out', f('ca.crt'));
  for (const [n, cn, ext] of [
    ['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'],
    ['client', 'orchd', 'extendedKeyUsage=clientAuth'],
  ]) {
    key(`${n}.key`);
    ssl('req', '-new', '-key', f(`${n}.key`), '-subj', `/CN=${cn}`, '-out', f(`${n}.csr`));
    writeFileSync(f(`${n}.ext`), ext);
    ssl('x509', '-req', '-in', f(`${n}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${n}.ext`), '-out', f(`${n}.crt`));
  }
  return { caFile: f('ca.crt'), certFile: f('server.crt'), keyFile: f('server.key'), clientCertFile: f('client.crt'), clientKeyFile: f('client.key') };
}

/**
 * A real single-member etcd on loopback with free ports and a temp data folder, stopped by its PID.
 * stop() and start() again on the same folder and ports are an etcd restart.
 */
export class TestEtcd {
  private child: ChildProcess | undefined;
  private readonly output: string[] = [];

  private constructor(
    readonly dataDir: string,
    public clientPort: number,
    public peerPort: number,
    readonly name = 'test',
    /** Every member's name=peer URL (a single member: itself). */
    private initialCluster = '',
    /** Serving TLS, and asking clients for a certificate signed by ca (--client-cert-auth). */
    private readonly tls?: EtcdTls,
    /** More etcd flags (e.g. --auth-token-ttl). */
    private readonly extraArgs: string[] = [],
  ) {}

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.clientPort}`;
  }

  /** etcd3 options to reach it (with the client certificate when it serves TLS). */
  clientOptions(): IOptions {
    const t = this.tls;
    return t
      ? { hosts: this.url, credentials: { rootCertificate: readFileSync(t.caFile), certChain: readFileSync(t.clientCertFile), privateKey: readFileSync(t.clientKeyFile) } }
      : { hosts: this.url };
  }

  /** One member serving TLS to clients that show a certificate of tls.caFile, with more flags. */
  static async startWith(opts: { tls?: EtcdTls; args?: string[] }): Promise<TestEtcd> {
    const m = new TestEtcd(tempDir('orchd-test-etcd-', { until: 'file' }), await freePort(), await freePort(), 'test', '', opts.tls, opts.args);
    await m.start();
    return m;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  static async start(): Promise<TestEtcd> {
    return (await TestEtcd.cluster(1, 'test'))[0]!;
  }

  /**
   * A cluster of n members on loopback, started together (each waits for a quorum). A free port
   * can be taken by another test file between freePort() and etcd's bind: then the members start
   * again, on other ports.
   */
  static async cluster(n: number, name = 'm'): Promise<TestEtcd[]> {
    const members: TestEtcd[] = [];
    for (let i = 0; i < n; i++) members.push(new TestEtcd(tempDir('orchd-test-etcd-', { until: 'file' }), 0, 0, n === 1 ? name : `${name}${i}`));
    for (let attempt = 1; ; attempt++) {
      for (const m of members) [m.clientPort, m.peerPort, m.output.length] = [await freePort(), await freePort(), 0];
      const initial = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
      for (const m of members) m.initialCluster = initial;
      const started = await Promise.allSettled(members.map((m) => m.start()));
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (!failed) return members;
      await Promise.all(members.map((m) => m.stop()));
      if (attempt === 3 || !String(failed.reason).includes('address already in use')) {
        for (const m of members) removeDir(m.dataDir);
        throw failed.reason;
      }
      for (const m of members) removeDir(join(m.dataDir, 'data'));
    }
  }

  async start(): Promise<void> {
    const peer = `http://127.0.0.1:${this.peerPort}`;
    const child = spawn(
      ETCD_BINARY,
      [
        '--name',
        this.name,
        '--data-dir',
        join(this.dataDir, 'data'),
        '--listen-client-urls',
        this.url,
        '--advertise-client-urls',
        this.url,
        '--listen-peer-urls',
        peer,
        '--initial-advertise-peer-urls',
        peer,
        '--initial-cluster',
        this.initialCluster || `${this.name}=${peer}`,
        '--initial-cluster-state',
        'new',
        '--log-level',
        'error',
        ...(this.tls ? ['--cert-file', this.tls.certFile, '--key-file', this.tls.keyFile, '--trusted-ca-file', this.tls.caFile, '--client-cert-auth'] : []),
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    for (const s of [child.stdout, child.stderr]) s?.on('data', (b: Buffer) => this.output.push(b.toString()));
    const client = new Etcd3(this.clientOptions());
    const deadline = Date.now() + 30_000;
    try {
      for (;;) {
        try {
          await client.get('health').string();
          return;
        } catch (err) {
          if (child.exitCode !== null || Date.now() > deadline) {
            await this.stop();
            throw new Error(`etcd did not start: ${String(err)}\n${this.output.join('').slice(-2000)}`);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    } finally {
      client.close();
    }
  }

  /** Compacts etcd's history up to its newest revision, as an operator's `etcdctl compact` does. */
  async compactToHead(): Promise<void> {
    const client = new Etcd3({ hosts: this.url });
    try {
      const head = Number((await client.kv.range({ key: Buffer.from('health') })).header.revision);
      await client.kv.compact({ revision: head, physical: true });
    } finally {
      client.close();
    }
  }

  /** Stops etcd by its PID (SIGTERM, or SIGKILL for a crash) and waits until it is gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid!, signal);
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async destroy(): Promise<void> {
    await this.stop();
    removeDir(this.dataDir);
  }
}
