import { Etcd3 } from 'etcd3';
import { DEFAULT_PREFIX } from './etcd-log.js';
import { Layout } from './layout.js';

const PAGE = 1000;

/**
 * A one-time copy of the state an orchd before the kube-apiserver layout (layout.ts) kept under
 * `from` (a log key, and each object's newest record under `<from>k/<key>`) to the layout of today
 * under `to`. Its record bytes are the same codec's and are copied as they are; each object's
 * resourceVersion becomes the revision of its copy (readers stamp it: log/stamp.ts), so clients
 * relist. The old keys are left alone. Returns how many objects were copied.
 */
export async function copyOldLayout(servers: string[], from = 'orchd/', to = DEFAULT_PREFIX): Promise<number> {
  const client = new Etcd3({ hosts: servers });
  const layout = new Layout(to);
  const objects = Buffer.from(`${from}k/`);
  const end = Buffer.from(`${from}k0`); // '0' follows '/': the end of the k/ range
  let copied = 0;
  try {
    for (let key = objects; ;) {
      const res = await client.kv.range({ key, range_end: end, limit: PAGE });
      for (const kv of res.kvs) {
        await client.kv.put({ key: layout.object(kv.key.toString('utf8', objects.length)), value: kv.value });
        copied++;
      }
      if (!res.more || res.kvs.length === 0) return copied;
      key = Buffer.concat([res.kvs[res.kvs.length - 1].key, Buffer.from([0])]);
    }
  } finally {
    client.close();
  }
}
