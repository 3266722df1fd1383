/*
 * How the log lies in etcd, under a prefix (default "orchd/"):
 *
 *   <prefix>log        the log itself: one key rewritten by every append with the encoded record
 *                      (codec.ts, as on LevelDB). Its history is the log: the record of seq s is this
 *                      key's value at revision base + s. It is created once, empty, at revision base.
 *   <prefix>secret     32 random bytes written with the log key: what replicas sign continue tokens
 *                      with, so that a list's next page can be asked of any replica.
 *   <prefix>k/<key>    each storage key's latest record (deleted with it): the mod revision an
 *                      append's expect is checked against in the same transaction, and the state
 *                      etcd's compaction keeps for every key at the horizon.
 *
 * seq = revision - base: resourceVersions count 1, 2, 3… from the log's creation, without holes, as
 * long as nothing else writes to this etcd (every append checks that the log key was last written at
 * the revision just before its own, and a revision that comes out otherwise stops the log).
 */
export class Layout {
  readonly log: Buffer;
  readonly secret: Buffer;
  /** The range of every object key: [objects, objectsEnd). */
  readonly objects: Buffer;
  readonly objectsEnd: Buffer;

  constructor(readonly prefix: string) {
    this.log = Buffer.from(`${prefix}log`);
    this.secret = Buffer.from(`${prefix}secret`);
    this.objects = Buffer.from(`${prefix}k/`);
    this.objectsEnd = prefixEnd(this.objects);
  }

  object(key: string): Buffer {
    return Buffer.concat([this.objects, Buffer.from(key)]);
  }

  /** The storage key of an object key. */
  keyOf(objectKey: Buffer): string {
    return objectKey.toString('utf8', this.objects.length);
  }
}

/** The first key after every key that starts with prefix (etcd's range_end for a prefix). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** The resource of a storage key (`<group>/<plural>/…`) as Kubernetes names it: `<plural>.<group>`, the core group's plural alone. */
export function resourceOf(key: string): string {
  const [group, plural] = key.split('/', 2);
  return group ? `${plural}.${group}` : (plural ?? key);
}
