import { tempDir } from '../helpers/temp.js';
import { isReady, spawnServer, type ServerChild } from '../server/child.js';

/**
 * `orchd serve --storage etcd` on etcdUrl as a child process, ready; its data folder is dir, or a new
 * temp folder removed after the test file (the replica may outlive the test that started it).
 */
export async function startReplica(etcdUrl: string, dir?: string): Promise<ServerChild & { dir: string }> {
  const dataDir = dir ?? tempDir('orchd-replica-', { until: 'file' });
  const child = await spawnServer(dataDir, ['--storage', 'etcd', '--etcd-servers', etcdUrl], { lifeMs: 240_000 });
  await child.waitForLine(isReady, 60_000);
  return Object.assign(child, { dir: dataDir });
}
