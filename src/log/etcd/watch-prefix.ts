import type { LeanEtcd } from './grpc/client.js';
import { decodeWatchResponse, encodeWatchCreate, WATCH_PROGRESS, type WatchEvent } from './grpc/proto.js';

/** The revisions a watch asked for are compacted: etcd keeps revisions from compactRevision on. */
export class CompactedError extends Error {
  constructor(readonly compactRevision: number) {
    super(`etcd compacted its history up to revision ${compactRevision}`);
    this.name = 'CompactedError';
  }
}

/**
 * How long etcd may take to confirm a new watch. A stream opened on a member that was just killed may
 * never fail (its connection waits): past this it is given up and the log watches again, through
 * another member.
 */
const CREATE_DEADLINE_MS = 3000;

export interface PrefixWatch {
  /** Asks etcd for a progress notification (KEP-2340): onProgress is told the revision it has sent everything through. */
  requestProgress(): void;
  /** Stops the watch; onEnd is not called after it. */
  cancel(): void;
}

export interface PrefixWatchHandlers {
  /** Events in revision order (with prev_kv): one call for the responses of one read, up to the next that is not events. */
  onEvents(events: WatchEvent[], revision: number): void;
  /** A progress notification: every event through revision has been sent on this stream. */
  onProgress(revision: number): void;
  /** Called once, when the stream fails or etcd cancels the watch. */
  onEnd(err: Error): void;
}

/**
 * One etcd watch of a key range from a revision, with prev_kv (a delete's event carries the value it
 * removed), on a gRPC stream of its own: the log decides what a lost stream means (a compacted
 * revision, a member lost), nothing resumes behind its back.
 */
export async function watchPrefix(client: LeanEtcd, key: Buffer, rangeEnd: Buffer, fromRevision: number, h: PrefixWatchHandlers): Promise<PrefixWatch> {
  let done = false;
  let unconfirmed: NodeJS.Timeout | undefined;
  const end = (err: Error) => {
    if (done) return;
    done = true;
    clearTimeout(unconfirmed);
    stream.cancel();
    h.onEnd(err);
  };
  const stream = await client.watch({
    onMessages(messages) {
      // The events of every response one read brought go to the views in one pass.
      let events: WatchEvent[] = [];
      let revision = 0;
      const flush = () => {
        if (events.length === 0 || done) return;
        h.onEvents(events, revision);
        events = [];
      };
      for (const message of messages) {
        if (done) return;
        const res = decodeWatchResponse(message);
        if (res.events.length > 0) {
          if (events.length === 0) events = res.events;
          else for (const ev of res.events) events.push(ev);
          revision = res.header.revision;
          continue;
        }
        flush();
        if (res.created) clearTimeout(unconfirmed);
        else if (res.canceled) end(res.compact_revision > 0 ? new CompactedError(res.compact_revision) : new Error(`etcd cancelled the watch: ${res.cancel_reason}`));
        else h.onProgress(res.header.revision);
      }
      flush();
    },
    onEnd: end,
  });
  unconfirmed = setTimeout(() => {
    client.drop();
    end(new Error(`etcd did not confirm the watch within ${CREATE_DEADLINE_MS} ms`));
  }, CREATE_DEADLINE_MS);
  stream.write(encodeWatchCreate({ key, rangeEnd, startRevision: fromRevision, prevKv: true }));
  return {
    requestProgress() {
      if (!done) stream.write(WATCH_PROGRESS);
    },
    cancel() {
      if (done) return;
      done = true;
      clearTimeout(unconfirmed);
      stream.cancel();
    },
  };
}
