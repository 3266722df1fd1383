/** Protobuf bodies: the `k8s\0` envelope around a core/v1 Namespace, written here field by field. */
import protobuf from 'protobufjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeBody, OBJECT_MEDIA_TYPES } from '../../../src/http/codec/body.js';
import { loadProtobufDecoder } from '../../../src/http/codec/protobuf.js';
import { ApiError } from '../../../src/http/respond/status.js';

const PB = 'application/vnd.kubernetes.protobuf';
const bytes = (f: (w: protobuf.Writer) => void): Uint8Array => {
  const w = protobuf.Writer.create();
  f(w);
  return w.finish();
};
/** A map entry: key = 1, value = 2. */
const entry = (k: string, v: string) => bytes((w) => w.uint32(10).string(k).uint32(18).string(v));

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = bytes((w) => w.uint32(10).string(apiVersion).uint32(18).string(kind));
  const unknown = bytes((w) => w.uint32(10).bytes(typeMeta).uint32(18).bytes(raw).uint32(34).string(PB));
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}

const meta = bytes(
  (w) =>
    w
      .uint32(10)
      .string('team-a') // name
      .uint32(66)
      .bytes(new Uint8Array()) // creationTimestamp: the zero time
      .uint32(90)
      .bytes(entry('tier', 'gold')) // labels
      .uint32(98)
      .bytes(entry('note', 'x')) // annotations
      .uint32(114)
      .string('custom.example.com/f'), // finalizers
);
const namespace = bytes((w) =>
  w
    .uint32(10)
    .bytes(meta)
    .uint32(18)
    .bytes(bytes((s) => s.uint32(10).string('kubernetes')))
    .uint32(26)
    .bytes(new Uint8Array()),
);

const failure = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('did not fail');
};

describe('protobuf bodies', () => {
  beforeAll(loadProtobufDecoder);

  it('decodes a core/v1 Namespace to the JSON object it stands for', () => {
    const got = decodeBody(envelope('v1', 'Namespace', namespace), PB, { accept: OBJECT_MEDIA_TYPES });
    expect(got.mediaType).toBe(PB);
    expect(got.value).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { tier: 'gold' }, annotations: { note: 'x' }, finalizers: ['custom.example.com/f'] },
      spec: { finalizers: ['kubernetes'] },
      status: {},
    });
  });
  it('answers 415 for a type it has no protobuf for, 400 for bytes that are not a protobuf message', () => {
    const pod = failure(() => decodeBody(envelope('v1', 'Pod', new Uint8Array()), PB, { accept: OBJECT_MEDIA_TYPES }));
    expect(pod.status).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(pod.status.message).toContain('v1, Kind=Pod');
    const json = failure(() => decodeBody(Buffer.from('{"kind":"Namespace"}'), PB, { accept: OBJECT_MEDIA_TYPES }));
    expect(json.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    const truncated = failure(() => decodeBody(envelope('v1', 'Namespace', namespace).subarray(0, 20), PB, { accept: OBJECT_MEDIA_TYPES }));
    expect(truncated.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    // A creationTimestamp far out of range: a 400, not a 500.
    const farTime = bytes((w) =>
      w
        .uint32(10)
        .string('t')
        .uint32(66)
        .bytes(bytes((t) => t.uint32(8).int64(9e15))),
    );
    const far = failure(() =>
      decodeBody(
        envelope(
          'v1',
          'Namespace',
          bytes((w) => w.uint32(10).bytes(farTime)),
        ),
        PB,
        { accept: OBJECT_MEDIA_TYPES },
      ),
    );
    expect(far.status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
  it("leaves out the empty scalars Go writes and its JSON omits, and keeps those Kubernetes' JSON writes empty", () => {
    const owner = bytes(
      (w) =>
        w
          .uint32(10)
          .string('') // kind: no omitempty, kept
          .uint32(26)
          .string('o') // name
          .uint32(34)
          .string('') // uid: kept
          .uint32(42)
          .string('v1') // apiVersion
          .uint32(48)
          .bool(false), // controller: a pointer, false is a value
    );
    const emptyMeta = bytes((w) =>
      w
        .uint32(10)
        .string('team-b')
        .uint32(18)
        .string('') // generateName
        .uint32(34)
        .string('') // selfLink
        .uint32(42)
        .string('') // uid
        .uint32(56)
        .int64(0) // generation
        .uint32(80)
        .int64(0) // deletionGracePeriodSeconds: a pointer, 0 is a value
        .uint32(90)
        .bytes(entry('empty', '')) // a label whose value is empty
        .uint32(106)
        .bytes(owner),
    );
    const condition = bytes((w) => w.uint32(10).string('').uint32(18).string('').uint32(42).string('').uint32(50).string(''));
    const status = bytes((w) => w.uint32(10).string('').uint32(18).bytes(condition));
    const got = decodeBody(
      envelope(
        'v1',
        'Namespace',
        bytes((w) => w.uint32(10).bytes(emptyMeta).uint32(26).bytes(status)),
      ),
      PB,
      { accept: OBJECT_MEDIA_TYPES },
    );
    expect(got.value).toStrictEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-b', deletionGracePeriodSeconds: 0, labels: { empty: '' }, ownerReferences: [{ kind: '', name: 'o', uid: '', apiVersion: 'v1', controller: false }] },
      status: { conditions: [{ type: '', status: '' }] },
    });
  });
});
