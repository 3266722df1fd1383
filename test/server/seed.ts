import { randomUUID } from 'node:crypto';
import { LevelDbLog } from '../../src/log/leveldb-log.js';

/** Namespaces written into the log directly, as the server writes them: a big store in a second, for replay and memory tests. */
export async function seedNamespaces(path: string, count: number): Promise<void> {
  const log = new LevelDbLog({ path });
  await log.open();
  try {
    const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    for (let i = 0; i < count; i += 5000) {
      let last: Promise<number> = Promise.resolve(0);
      for (let j = i; j < Math.min(count, i + 5000); j++) {
        const name = `seed-${j}`;
        last = log.append({
          type: 'put',
          key: `/namespaces//${name}`,
          value: {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name, uid: randomUUID(), creationTimestamp: created, labels: { 'kubernetes.io/metadata.name': name } },
            spec: { finalizers: ['kubernetes'] },
            status: { phase: 'Active' },
          },
        }).durable;
      }
      await last;
    }
  } finally {
    await log.close();
  }
}
