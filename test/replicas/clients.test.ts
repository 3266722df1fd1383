/**
 * Real clients against different replicas of one etcd log: kubectl writes through one, a
 * @kubernetes/client-node informer follows the other.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestEtcd } from '../helpers/etcd.js';
import { KUBECTL } from '../helpers/kubectl.js';
import { killAll, type ServerChild } from '../server/child.js';
import { startReplica } from './replica.js';
import { tempDir } from '../helpers/temp.js';
import { kubeConfigFor } from '../helpers/client-node.js';
import { eventually } from '../helpers/poll.js';

let etcd: TestEtcd;
let home = '';

const replica = () => startReplica(etcd.url);

let a: ServerChild;
let b: ServerChild;

beforeAll(async () => {
  etcd = await TestEtcd.start();
  [a, b] = await Promise.all([replica(), replica()]);
  home = tempDir('orchd-kubectl-');
  await writeFile(join(home, 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
}, 120_000);

afterAll(async () => {
  await killAll();
  await etcd?.destroy();
});

function kubectl(server: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      ['--server', server, '--kubeconfig', join(home, 'kubeconfig'), '--cache-dir', join(home, 'cache'), ...args],
      { cwd: home, timeout: 30_000, env: { ...process.env, HOME: home } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('kubectl on one replica, a client-node informer on the other', () => {
  it("the informer on B sees what kubectl does on A, with A's resourceVersions", async () => {
    const kc = kubeConfigFor(b.url);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer(kc, '/api/v1/namespaces', () => core.listNamespace() as Promise<KubernetesListObject<KubernetesObject>>);
    const seen: string[] = [];
    const errors: unknown[] = [];
    const record = (verb: string) => (o: KubernetesObject) => seen.push(`${verb} ${o.metadata?.name}@${o.metadata?.resourceVersion}`);
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('error', (err) => errors.push(err));
    const waitFor = (entry: string) =>
      eventually(() => seen.includes(entry), { timeoutMs: 15_000, stepMs: 50, what: () => `informer seeing "${entry}" (saw ${JSON.stringify(seen.slice(-10))}, errors ${String(errors)})` });
    await informer.start();
    try {
      const manifest = join(home, 'namespace.yaml');
      await writeFile(manifest, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-kubectl\n');
      const created = await kubectl(a.url, ['create', '-f', manifest, '-o', 'jsonpath={.metadata.resourceVersion}']);
      expect(created).toMatchObject({ code: 0, stderr: '' });
      await waitFor(`add from-kubectl@${created.stdout}`);
      expect(await kubectl(a.url, ['label', 'namespace', 'from-kubectl', 'phase=two'])).toMatchObject({ code: 0, stderr: '' });
      // (kubectl label -o prints the object it sent, with the version it read.)
      const labelled = await kubectl(a.url, ['get', 'namespace', 'from-kubectl', '-o', 'jsonpath={.metadata.resourceVersion}']);
      expect(Number(labelled.stdout)).toBeGreaterThan(Number(created.stdout));
      await waitFor(`update from-kubectl@${labelled.stdout}`);
      expect(informer.get('from-kubectl')?.metadata?.labels).toMatchObject({ phase: 'two' });
      // And kubectl on B reads the same object A wrote.
      const onB = await kubectl(b.url, ['get', 'namespace', 'from-kubectl', '-o', 'jsonpath={.metadata.resourceVersion} {.metadata.labels.phase}']);
      expect(onB.stdout).toBe(`${labelled.stdout} two`);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
