import protobuf from 'protobufjs/minimal.js';

/*
 * Static encoders and decoders for the few etcd messages the hot path sends and takes (rpc.proto and
 * kv.proto of etcd's etcdserverpb and mvccpb; field numbers from there). Written out by hand on
 * protobufjs's Writer and Reader instead of loading the .proto at run time: a Txn and a watch message
 * cost one pass each, with no reflection, no Long objects (a revision fits in a double: etcd's int64
 * revisions stay far below 2^53) and no copies of keys and values (they are views of the frame).
 */

const { Writer, Reader } = protobuf;
type ProtoReader = protobuf.Reader;

/** etcd's Compare.CompareTarget. */
export enum Target {
  Version = 0,
  Create = 1,
  Mod = 2,
}

/** etcd's Compare.CompareResult. */
export enum Result {
  Equal = 0,
  Greater = 1,
  Less = 2,
  NotEqual = 3,
}

export interface Compare {
  key: Buffer;
  target: Target.Mod | Target.Create | Target.Version;
  result: Result;
  /** The number compared with (mod_revision, create_revision or version, as target says). */
  value: number;
}

export type RequestOp = { put: { key: Buffer; value: Buffer } } | { deleteRange: { key: Buffer } } | { range: { key: Buffer } };

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface KeyValue {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
}

export interface Header {
  cluster_id: string;
  revision: number;
}

export interface TxnResponse {
  header: Header;
  succeeded: boolean;
  /** The kvs of each range response, in op order (put and delete answers carry nothing the log reads). */
  ranges: KeyValue[][];
}

export interface WatchEvent {
  type: 'Put' | 'Delete';
  kv: KeyValue;
  prev_kv?: KeyValue;
}

export interface WatchResponse {
  header: Header;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  fragment: boolean;
  events: WatchEvent[];
}

export interface WatchCreate {
  key: Buffer;
  rangeEnd: Buffer;
  startRevision: number;
  prevKv: boolean;
}

// Wire types: 0 varint, 2 length-delimited.
const tag = (field: number, wire: 0 | 2) => (field << 3) | wire;

function writeOp(w: protobuf.Writer, field: number, op: RequestOp): void {
  w.uint32(tag(field, 2)).fork();
  if ('put' in op) w.uint32(tag(2, 2)).fork().uint32(tag(1, 2)).bytes(op.put.key).uint32(tag(2, 2)).bytes(op.put.value).ldelim();
  else if ('deleteRange' in op) w.uint32(tag(3, 2)).fork().uint32(tag(1, 2)).bytes(op.deleteRange.key).ldelim();
  else w.uint32(tag(1, 2)).fork().uint32(tag(1, 2)).bytes(op.range.key).ldelim();
  w.ldelim();
}

export function encodeTxn(req: TxnRequest): Uint8Array {
  const w = Writer.create();
  for (const c of req.compare) {
    // Compare: result 1, target 2, key 3, then the oneof: version 4, create_revision 5, mod_revision 6.
    const field = c.target === Target.Mod ? 6 : c.target === Target.Create ? 5 : 4;
    w.uint32(tag(1, 2)).fork().uint32(tag(1, 0)).int32(c.result).uint32(tag(2, 0)).int32(c.target).uint32(tag(3, 2)).bytes(c.key).uint32(tag(field, 0)).int64(c.value).ldelim();
  }
  for (const op of req.success) writeOp(w, 2, op);
  for (const op of req.failure) writeOp(w, 3, op);
  return w.finish();
}

export function encodeWatchCreate(c: WatchCreate): Uint8Array {
  const w = Writer.create();
  w.uint32(tag(1, 2)).fork().uint32(tag(1, 2)).bytes(c.key).uint32(tag(2, 2)).bytes(c.rangeEnd);
  if (c.startRevision > 0) w.uint32(tag(3, 0)).int64(c.startRevision);
  if (c.prevKv) w.uint32(tag(6, 0)).bool(true);
  return w.ldelim().finish();
}

/** WatchRequest { progress_request: {} }. */
export const WATCH_PROGRESS: Uint8Array = Writer.create().uint32(tag(3, 2)).fork().ldelim().finish();

export function encodeAuthenticate(name: string, password: string): Uint8Array {
  return Writer.create().uint32(tag(1, 2)).string(name).uint32(tag(2, 2)).string(password).finish();
}

/** A varint as a number: exact below 2^53, which etcd's revisions and ids used here stay under. */
function varnum(r: ProtoReader): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    const b = r.buf[r.pos++];
    n += (b & 0x7f) * scale;
    if (b < 0x80) return n;
    scale *= 128;
  }
  throw new Error('malformed varint');
}

/** A uint64 as decimal text (cluster ids use all 64 bits). */
function uint64Text(r: ProtoReader): string {
  let n = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    const b = r.buf[r.pos++];
    n |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return n.toString();
    shift += 7n;
  }
  throw new Error('malformed varint');
}

/** A length-delimited field's bytes as a view of the frame. */
function view(r: ProtoReader): Buffer {
  const len = r.uint32();
  const start = r.pos;
  r.pos += len;
  const buf = r.buf as Buffer;
  return buf.subarray(start, start + len);
}

/** Runs each field of the message ending at end through take, skipping what it does not read. */
function fields(r: ProtoReader, end: number, take: (field: number) => boolean): void {
  while (r.pos < end) {
    const t = r.uint32();
    if (!take(t >>> 3)) r.skipType(t & 7);
  }
}

const EMPTY = Buffer.alloc(0);

function decodeHeader(r: ProtoReader, end: number): Header {
  const h: Header = { cluster_id: '0', revision: 0 };
  fields(r, end, (f) => {
    if (f === 1) h.cluster_id = uint64Text(r);
    else if (f === 3) h.revision = varnum(r);
    else return false;
    return true;
  });
  return h;
}

function decodeKv(r: ProtoReader, end: number): KeyValue {
  const kv: KeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 };
  fields(r, end, (f) => {
    if (f === 1) kv.key = view(r);
    else if (f === 2) kv.create_revision = varnum(r);
    else if (f === 3) kv.mod_revision = varnum(r);
    else if (f === 4) kv.version = varnum(r);
    else if (f === 5) kv.value = view(r);
    else return false;
    return true;
  });
  return kv;
}

const sub = <T>(r: ProtoReader, decode: (r: ProtoReader, end: number) => T): T => {
  const len = r.uint32();
  return decode(r, r.pos + len);
};

function decodeRangeKvs(r: ProtoReader, end: number): KeyValue[] {
  const kvs: KeyValue[] = [];
  fields(r, end, (f) => f === 2 && (kvs.push(sub(r, decodeKv)), true));
  return kvs;
}

export function decodeTxnResponse(buf: Buffer): TxnResponse {
  const r = Reader.create(buf);
  const res: TxnResponse = { header: { cluster_id: '0', revision: 0 }, succeeded: false, ranges: [] };
  fields(r, buf.length, (f) => {
    if (f === 1) res.header = sub(r, decodeHeader);
    else if (f === 2) res.succeeded = r.bool();
    else if (f === 3) {
      // ResponseOp: response_range 1 (the others carry nothing the log reads).
      const op: KeyValue[][] = [];
      sub(r, (r, end) => fields(r, end, (g) => g === 1 && (op.push(sub(r, decodeRangeKvs)), true)));
      res.ranges.push(op[0] ?? []);
    } else return false;
    return true;
  });
  return res;
}

function decodeEvent(r: ProtoReader, end: number): WatchEvent {
  const ev: WatchEvent = { type: 'Put', kv: undefined as unknown as KeyValue };
  fields(r, end, (f) => {
    if (f === 1) ev.type = r.int32() === 1 ? 'Delete' : 'Put';
    else if (f === 2) ev.kv = sub(r, decodeKv);
    else if (f === 3) ev.prev_kv = sub(r, decodeKv);
    else return false;
    return true;
  });
  ev.kv ??= { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 };
  return ev;
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  const r = Reader.create(buf);
  const res: WatchResponse = { header: { cluster_id: '0', revision: 0 }, watch_id: 0, created: false, canceled: false, compact_revision: 0, cancel_reason: '', fragment: false, events: [] };
  fields(r, buf.length, (f) => {
    if (f === 1) res.header = sub(r, decodeHeader);
    else if (f === 2) res.watch_id = varnum(r);
    else if (f === 3) res.created = r.bool();
    else if (f === 4) res.canceled = r.bool();
    else if (f === 5) res.compact_revision = varnum(r);
    else if (f === 6) res.cancel_reason = r.string();
    else if (f === 7) res.fragment = r.bool();
    else if (f === 11) res.events.push(sub(r, decodeEvent));
    else return false;
    return true;
  });
  return res;
}

export function decodeAuthenticateResponse(buf: Buffer): string {
  const r = Reader.create(buf);
  let token = '';
  fields(r, buf.length, (f) => f === 2 && ((token = r.string()), true));
  return token;
}
