import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isReady, spawnServer, type ServerChild } from '../server/child.js';

/**
 * `orchd serve --storage etcd` on etcdUrl as a child process, ready; its data folder is dir, or a new
 * temp folder added to dirs (for the caller to remove).
 */
export async function startReplica(etcdUrl: string, dirs: string[], dir?: string): Promise<ServerChild & { dir: string }> {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'orchd-replica-')));
  if (!dir) dirs.push(dataDir);
  const child = await spawnServer(dataDir, ['--storage', 'etcd', '--etcd-servers', etcdUrl], { lifeMs: 240_000 });
  await child.waitForLine(isReady, 60_000);
  return Object.assign(child, { dir: dataDir });
}
