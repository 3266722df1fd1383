import type { Etcd3, IKeyValue, IWatchResponse } from 'etcd3';

/** The revisions a watch asked for are compacted: etcd keeps revisions from compactRevision on. */
export class CompactedError extends Error {
  constructor(readonly compactRevision: number) {
    super(`etcd compacted its history up to revision ${compactRevision}`);
    this.name = 'CompactedError';
  }
}

/**
 * How long etcd may take to confirm a new watch. A stream opened on a member that was just killed may
 * never fail (its channel waits to reconnect): past this it is given up and the log watches again,
 * through another member.
 */
const CREATE_DEADLINE_MS = 3000;

export interface KeyWatch {
  /** Stops the watch; onEnd is not called after it. */
  cancel(): void;
}

/**
 * One etcd watch of one key from a revision, on a gRPC stream of its own (not etcd3's shared
 * WatchManager, which resumes by itself and drops the compact revision a cancelled watch reports:
 * the log decides what a lost stream means). onValues gets each message's key-values in revision
 * order; onEnd is called once, when the stream fails or etcd cancels the watch.
 */
export async function watchKey(
  client: Etcd3,
  key: Buffer,
  fromRevision: number,
  onValues: (kvs: IKeyValue[]) => void,
  onEnd: (err: Error) => void,
): Promise<KeyWatch> {
  const stream = await client.watchClient.watch();
  let done = false;
  const end = (err: Error) => {
    if (done) return;
    done = true;
    clearTimeout(unconfirmed);
    stream.cancel();
    onEnd(err);
  };
  const unconfirmed = setTimeout(() => end(new Error(`etcd did not confirm the watch within ${CREATE_DEADLINE_MS} ms`)), CREATE_DEADLINE_MS);
  stream.on('data', (res: IWatchResponse) => {
    if (done) return;
    clearTimeout(unconfirmed);
    if (res.canceled) {
      const compacted = Number(res.compact_revision);
      end(compacted > 0 ? new CompactedError(compacted) : new Error(`etcd cancelled the watch: ${res.cancel_reason}`));
      return;
    }
    if (res.events?.length) onValues(res.events.map((e) => e.kv));
  });
  stream.on('error', (err) => end(err));
  stream.on('end', () => end(new Error('the etcd watch stream ended')));
  stream.write({ create_request: { key, start_revision: fromRevision } });
  return {
    cancel() {
      if (done) return;
      done = true;
      clearTimeout(unconfirmed);
      stream.cancel();
    },
  };
}

/** etcd's compaction revision (0: none past fromRevision), as a watch of key from it reports it. */
export function compactedTo(client: Etcd3, key: Buffer, fromRevision: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let watch: KeyWatch | undefined;
    let settled = false;
    const done = (rev: number) => {
      settled = true;
      watch?.cancel();
      resolve(rev);
    };
    watchKey(client, key, fromRevision, () => done(0), (err) => {
      if (err instanceof CompactedError) done(err.compactRevision);
      else reject(err);
    }).then((w) => (settled ? w.cancel() : (watch = w)), reject);
  });
}
