/**
 * The etcd watch hands the views the events of every WatchResponse one read of the connection
 * brought in one call, and keeps their order with the messages that are not events. etcd decides
 * how its messages fall into reads, so the peer here is a plain HTTP/2 server speaking the Watch
 * call's framing, which can put several messages into one DATA frame on purpose.
 */
import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs/minimal.js';
import { afterEach, describe, expect, it } from 'vitest';
import { LeanEtcd } from '../../src/log/etcd/grpc/client.js';
import { watchPrefix } from '../../src/log/etcd/watch-prefix.js';
import { eventually } from '../helpers/poll.js';

/** A WatchResponse (etcd's rpc.proto): header.revision, created, and put events of key k at each revision. */
function watchResponse(revision: number, opts: { created?: boolean; events?: number[] }): Buffer {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2)
    .fork()
    .uint32((3 << 3) | 0)
    .int64(revision)
    .ldelim();
  if (opts.created) w.uint32((3 << 3) | 0).bool(true);
  for (const rev of opts.events ?? []) {
    w.uint32((11 << 3) | 2).fork();
    w.uint32((2 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).bytes(Buffer.from('/w/k'));
    w.uint32((3 << 3) | 0).int64(rev);
    w.uint32((5 << 3) | 2).bytes(Buffer.from(`v${rev}`));
    w.ldelim().ldelim();
  }
  const message = w.finish();
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return framed;
}

let server: Http2Server | undefined;
let client: LeanEtcd | undefined;
afterEach(async () => {
  client?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = client = undefined;
});

describe('etcd watch batches', () => {
  it('several WatchResponses in one read reach onEvents once, in order with the progress notifications between them', async () => {
    let watch: ServerHttp2Stream | undefined;
    server = createServer();
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.once('data', () => {
        watch = stream;
        stream.write(watchResponse(4, { created: true }));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    client = new LeanEtcd({ servers: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`] });

    const calls: string[] = [];
    const w = await watchPrefix(client, Buffer.from('/w/'), Buffer.from('/w0'), 5, {
      onEvents: (events) => calls.push(`events ${events.map((e) => `${e.kv.mod_revision}=${e.kv.value.toString()}`).join(' ')}`),
      onProgress: (revision) => calls.push(`progress ${revision}`),
      onEnd: (err) => calls.push(`end ${err.message}`),
    });
    await eventually(() => watch !== undefined);
    // One write, one DATA frame: three responses with events, a progress notification, one more.
    watch!.write(Buffer.concat([watchResponse(5, { events: [5] }), watchResponse(7, { events: [6, 7] }), watchResponse(8, { events: [8] }), watchResponse(8, {}), watchResponse(9, { events: [9] })]));
    await eventually(() => calls.length >= 3);
    expect(calls).toEqual(['events 5=v5 6=v6 7=v7 8=v8', 'progress 8', 'events 9=v9']);
    w.cancel();
  });
});
