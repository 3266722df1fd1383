/**
 * etcd, the storage under the Kubernetes API server, as the side-by-side peer: installed from Debian's
 * packages when asked and missing, run as a single member on loopback in a temp folder with its own
 * ports (fsync on: etcd's defaults), driven through the etcd3 client, stopped by its PID.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { Child } from '../child.js';
import { freePort } from '../orchd.js';

const CANDIDATES = ['/usr/bin/etcd', '/usr/local/bin/etcd'];

function findEtcd(): string | undefined {
  for (const c of CANDIDATES) if (existsSync(c)) return c;
  try {
    return execFileSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The etcd binary, installing Debian's etcd-server first if there is none (the user asked: --compare etcd). */
export function ensureEtcd(log: (msg: string) => void): string {
  const found = findEtcd();
  if (found) return found;
  log('etcd not found: installing Debian package etcd-server (apt-get install -y etcd-server)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', 'etcd-server'], { stdio: 'inherit', env });
  } catch {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'etcd-server'], { stdio: 'inherit', env });
  }
  const installed = findEtcd();
  if (!installed) throw new Error('etcd-server installed but no etcd binary found');
  return installed;
}

export class Etcd {
  private constructor(
    readonly child: Child,
    readonly client: Etcd3,
    readonly dataDir: string,
    readonly version: string,
    /** http://127.0.0.1:<client port> */
    readonly clientUrl: string,
  ) {}

  get pid(): number {
    return this.child.pid;
  }

  static async start(binary: string): Promise<Etcd> {
    const dataDir = await mkdtemp(join(tmpdir(), 'orchd-bench-etcd-'));
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const client = `http://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? 'etcd';
    const child = Child.start('etcd', binary, [
      '--name',
      'bench',
      '--data-dir',
      join(dataDir, 'data'),
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
      '--initial-cluster-state',
      'new',
      // Room for the write and read scenarios' objects (the 2 GiB default is enough for ~1M 1 KB puts).
      '--quota-backend-bytes',
      String(8 * 2 ** 30),
      '--log-level',
      'warn',
    ]);
    const etcd3 = new Etcd3({ hosts: `127.0.0.1:${clientPort}` });
    const deadline = performance.now() + 30_000;
    for (;;) {
      try {
        await etcd3.get('bench-health').string();
        break;
      } catch (err) {
        if (!child.alive || performance.now() > deadline) {
          etcd3.close();
          await child.stop('SIGKILL');
          await rm(dataDir, { recursive: true, force: true });
          throw new Error(`etcd did not become ready: ${String(err)}\n${child.lines.slice(-10).join('\n')}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return new Etcd(child, etcd3, dataDir, version, client);
  }

  /** Puts many key/value pairs fast: transactions of 128 puts (etcd's default --max-txn-ops). */
  async bulkPut(pairs: Iterable<[string, Buffer]>, inFlight = 8): Promise<void> {
    const batches: [string, Buffer][][] = [[]];
    for (const p of pairs) {
      if (batches[batches.length - 1].length === 128) batches.push([]);
      batches[batches.length - 1].push(p);
    }
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        await this.client.kv.txn({ success: batch.map(([k, v]) => ({ request_put: { key: Buffer.from(k), value: v } })) });
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.child.stop('SIGTERM', 10_000);
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
