import type { Etcd3, IEvent, IWatchResponse } from 'etcd3';

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

export interface PrefixWatch {
  /** Asks etcd for a progress notification (KEP-2340): onProgress is told the revision it has sent everything through. */
  requestProgress(): void;
  /** Stops the watch; onEnd is not called after it. */
  cancel(): void;
}

export interface PrefixWatchHandlers {
  /** Each message's events, in revision order (with prev_kv). */
  onEvents(events: IEvent[], revision: number): void;
  /** A progress notification: every event through revision has been sent on this stream. */
  onProgress(revision: number): void;
  /** Called once, when the stream fails or etcd cancels the watch. */
  onEnd(err: Error): void;
}

/**
 * One etcd watch of a key range from a revision, with prev_kv (a delete's event carries the value it
 * removed), on a gRPC stream of its own (not etcd3's shared WatchManager, which resumes by itself and
 * drops the compact revision a cancelled watch reports: the log decides what a lost stream means).
 */
export async function watchPrefix(client: Etcd3, key: Buffer, rangeEnd: Buffer, fromRevision: number, h: PrefixWatchHandlers): Promise<PrefixWatch> {
  const stream = await client.watchClient.watch();
  let done = false;
  const end = (err: Error) => {
    if (done) return;
    done = true;
    clearTimeout(unconfirmed);
    stream.cancel();
    h.onEnd(err);
  };
  const unconfirmed = setTimeout(() => end(new Error(`etcd did not confirm the watch within ${CREATE_DEADLINE_MS} ms`)), CREATE_DEADLINE_MS);
  stream.on('data', (res: IWatchResponse) => {
    if (done) return;
    if (res.created) return void clearTimeout(unconfirmed);
    if (res.canceled) {
      const compacted = Number(res.compact_revision);
      end(compacted > 0 ? new CompactedError(compacted) : new Error(`etcd cancelled the watch: ${res.cancel_reason}`));
      return;
    }
    const revision = Number(res.header.revision);
    if (res.events?.length) h.onEvents(res.events, revision);
    else h.onProgress(revision);
  });
  stream.on('error', (err) => end(err));
  stream.on('end', () => end(new Error('the etcd watch stream ended')));
  stream.write({ create_request: { key, range_end: rangeEnd, start_revision: fromRevision, prev_kv: true } });
  return {
    requestProgress() {
      if (!done) stream.write({ progress_request: {} });
    },
    cancel() {
      if (done) return;
      done = true;
      clearTimeout(unconfirmed);
      stream.cancel();
    },
  };
}
