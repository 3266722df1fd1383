/**
 * Protobuf request bodies decoded (protobuf.ts loads this file at the first one). kubectl 1.32 and
 * 1.33 send `create namespace NAME` as one: the 4-byte magic `k8s\0`, then a runtime.Unknown envelope whose
 * typeMeta names the type and whose raw bytes are that type's message (../shared/clients.md).
 * Decoded here into the JSON object the rest of the server takes, for the types kubectl sends this
 * way: core/v1 Namespace, ConfigMap, Secret and ServiceAccount (with their ObjectMeta). Any other type inside is a 415, as kube-apiserver
 * answers a type it has no protobuf for. Message definitions: Kubernetes' generated.proto files,
 * only the messages and fields these types use (unknown fields of a message are skipped by the
 * decoder, as protobuf decoders do).
 */
import protobuf from 'protobufjs';
import type { Decoded } from './json-decode.js';
import { ProtobufBodyError } from './protobuf-error.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const PROTO = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message ManagedFieldsEntry {
  optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4;
  optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8;
}
message OwnerReference {
  optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5;
  optional bool controller = 6; optional bool blockOwnerDeletion = 7;
}
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}
message NamespaceCondition {
  optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; repeated NamespaceCondition conditions = 2; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ObjectReference {
  optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5;
  optional string resourceVersion = 6; optional string fieldPath = 7;
}
message LocalObjectReference { optional string name = 1; }
message ServiceAccount {
  optional ObjectMeta metadata = 1; repeated ObjectReference secrets = 2; repeated LocalObjectReference imagePullSecrets = 3;
  optional bool automountServiceAccountToken = 4;
}
`;

const root = protobuf.parse(PROTO).root;
const Unknown = root.lookupType('k8s.Unknown');

/** The message of each type that may arrive as protobuf, by `apiVersion/kind`. */
const TYPES: ReadonlyMap<string, protobuf.Type> = new Map(
  // kubectl 1.32+ sends its typed `create` of these core kinds as protobuf too (create secret, configmap, serviceaccount).
  ['Namespace', 'ConfigMap', 'Secret', 'ServiceAccount'].map((kind) => [`v1/${kind}`, root.lookupType(`k8s.${kind}`)]),
);

/** Go's zero time (0001-01-01T00:00:00Z) in Unix seconds: Kubernetes writes it for an unset Time, JSON has null. */
const ZERO_TIME_SECONDS = -62135596800;

/** The JSON object a protobuf body holds (no duplicate keys can exist in protobuf). */
export function decodeProtobuf(buf: Buffer): Decoded {
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) throw new ProtobufBodyError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  const envelope = decodeMessage(Unknown, buf.subarray(MAGIC.length)) as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const kind = envelope.typeMeta?.kind ?? '';
  const type = TYPES.get(`${apiVersion}/${kind}`);
  if (!type) throw new ProtobufBodyError(`no protobuf encoding is served for ${apiVersion || '(no apiVersion)'}, Kind=${kind || '(no kind)'}`, true);
  const message = decodeMessage(type, envelope.raw ?? new Uint8Array());
  let object: Record<string, unknown>;
  try {
    object = toJson(message, type) as Record<string, unknown>;
  } catch (err) {
    // managedFields that are not JSON, a time out of range: malformed, not a server error.
    throw new ProtobufBodyError(`the protobuf body could not be decoded: ${(err as Error).message}`);
  }
  return { value: { apiVersion, kind, ...object }, duplicates: [] };
}

function decodeMessage(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  try {
    return type.toObject(type.decode(bytes), { longs: Number, bytes: Array, defaults: false, arrays: false, objects: false });
  } catch (err) {
    throw new ProtobufBodyError(`the protobuf body could not be decoded: ${(err as Error).message}`);
  }
}

/**
 * The scalar fields whose empty value Kubernetes' JSON writes, by message: Go fields without
 * `omitempty` (OwnerReference's four names, a condition's type and status) and pointers, where the
 * zero is a value set (`deletionGracePeriodSeconds: 0`, `controller: false`). Every other scalar is
 * a Go value with `omitempty`: Go's protobuf marshaller writes it even when empty (kubectl sends
 * `generateName: ""`), and its JSON leaves it out, so decoding drops it as well.
 */
const KEPT_WHEN_EMPTY: Readonly<Record<string, ReadonlySet<string>>> = {
  OwnerReference: new Set(['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion']),
  ObjectMeta: new Set(['deletionGracePeriodSeconds']),
  NamespaceCondition: new Set(['type', 'status']),
  ConfigMap: new Set(['immutable']),
  Secret: new Set(['immutable']),
  ServiceAccount: new Set(['automountServiceAccountToken']),
};

const isEmptyScalar = (v: unknown): boolean => v === '' || v === 0 || v === false;

/** Messages as Kubernetes' JSON writes them: empty scalars left out, Time as RFC 3339 (left out for the zero time), FieldsV1 as its JSON. */
function toJson(v: unknown, type: protobuf.Type): unknown {
  if (Array.isArray(v)) return v.map((x) => toJson(x, type));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  const kept = KEPT_WHEN_EMPTY[type.name];
  for (const [k, x] of Object.entries(v)) {
    const field = type.fields[k];
    const message = field?.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (k === 'fieldsV1' && isObject(x)) out[k] = JSON.parse(Buffer.from((x.Raw as number[] | undefined) ?? []).toString('utf8') || '{}');
    else if (message?.name === 'Time' && isObject(x)) {
      const time = rfc3339(x);
      if (time !== undefined) out[k] = time;
    } else if (message) out[k] = toJson(x, message);
    // Bytes are base64 in JSON (a Secret's data, a ConfigMap's binaryData).
    else if (field?.map && field.type === 'bytes' && isObject(x)) out[k] = Object.fromEntries(Object.entries(x).map(([key, b]) => [key, Buffer.from(b as number[]).toString('base64')]));
    else if (field?.map || Array.isArray(x) || !isEmptyScalar(x) || kept?.has(k)) out[k] = x;
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An empty Time message is how Kubernetes marshals the zero time. */
function rfc3339(t: Record<string, unknown>): string | undefined {
  if (t.seconds === undefined && t.nanos === undefined) return undefined;
  const seconds = Number(t.seconds ?? 0);
  if (seconds <= ZERO_TIME_SECONDS) return undefined;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
