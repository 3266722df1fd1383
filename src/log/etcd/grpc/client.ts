import { Channel, type BidiStream, type ChannelOptions, type StreamHandlers } from './channel.js';
import { decodeTxnResponse, encodeTxn, type TxnRequest, type TxnResponse } from './proto.js';

/**
 * The two calls of every write and every replica's view, KV.Txn and Watch.Watch, on node:http2
 * with the static codecs of proto.ts; the rare calls (status, ranges, compaction) stay on the
 * library client (etcd3), where their cost does not show.
 */
export class LeanEtcd {
  private readonly channel: Channel;

  constructor(options: ChannelOptions) {
    this.channel = new Channel(options);
  }

  txn(req: TxnRequest, timeoutMs: number): Promise<TxnResponse> {
    return this.channel.unary('/etcdserverpb.KV/Txn', encodeTxn(req), timeoutMs, decodeTxnResponse);
  }

  /** A Watch stream: the caller writes WatchRequests and reads WatchResponses (proto.ts). */
  watch(h: StreamHandlers): Promise<BidiStream> {
    return this.channel.stream('/etcdserverpb.Watch/Watch', h);
  }

  /** The member in use does not answer: the next call goes to the next one. */
  drop(): void {
    this.channel.drop();
  }

  close(): void {
    this.channel.close();
  }
}
