/**
 * The Swagger 2.0 document in gnostic's protobuf encoding (`openapi.v2.Document` of
 * github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto), the form kubectl 1.27 and 1.28 ask
 * for with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
 *
 * kube-apiserver produces it by parsing its JSON document with gnostic and marshalling the message;
 * this encodes our JSON document the same way, by hand, for the messages a Kubernetes document uses.
 * What kubectl reads back (k8s.io/kube-openapi pkg/util/proto, cli-runtime's QueryParamVerifier):
 * definitions with properties/items/additionalProperties/$ref, vendor extensions as NamedAny whose
 * Any.yaml holds the value as YAML (JSON text is YAML, and every string in it is quoted, so YAML 1.1
 * never reads "on" or "no" as a boolean), and on each PATCH operation its GVK and query parameters.
 *
 * proto3 rules followed: empty strings and false are not written; an embedded message that is present
 * is written even when empty, because presence matters (kube-openapi reads an object with
 * `properties: {}` as a kind, and one without as a map).
 */
import type { JsonValue } from '../resources/types.js';

type Json = JsonValue;
type JsonObject = { [key: string]: Json };

const LEN = 2;
const VARINT = 0;

function varint(n: number, out: number[]): void {
  // Field numbers, lengths and booleans only: non-negative and far below 2^53.
  while (n > 0x7f) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

const text = new TextEncoder();

/** Builds one message; nested messages are encoded first and written length-prefixed. */
class Message {
  private readonly parts: Uint8Array[] = [];

  private tag(field: number, wire: number): void {
    const head: number[] = [];
    varint(field * 8 + wire, head);
    this.parts.push(Uint8Array.from(head));
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LEN);
    const len: number[] = [];
    varint(value.length, len);
    this.parts.push(Uint8Array.from(len), value);
    return this;
  }

  string(field: number, value: Json | undefined): this {
    if (typeof value === 'string' && value !== '') this.bytes(field, text.encode(value));
    return this;
  }

  /** A repeated string: every element is written, empty ones too. */
  strings(field: number, values: Json | undefined): this {
    for (const v of Array.isArray(values) ? values : []) this.bytes(field, text.encode(String(v)));
    return this;
  }

  bool(field: number, value: Json | undefined): this {
    if (value === true) {
      this.tag(field, VARINT);
      this.parts.push(Uint8Array.of(1));
    }
    return this;
  }

  message(field: number, value: Message | undefined): this {
    if (value) this.bytes(field, value.finish());
    return this;
  }

  messages(field: number, values: Message[]): this {
    for (const v of values) this.message(field, v);
    return this;
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: Json | undefined): [string, Json][] => (isObject(v) ? Object.entries(v) : []);

/** Any{yaml}: a value kept as YAML text. */
const any = (value: Json): Message => new Message().string(2, JSON.stringify(value));

/** The `x-…` keys of an object as NamedAny messages (vendor_extension fields). */
const vendorExtensions = (o: JsonObject): Message[] =>
  entries(o)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, value]) => new Message().string(1, name).message(2, any(value)));

function schema(s: JsonObject): Message {
  const m = new Message().string(1, s.$ref).string(2, s.format).string(3, s.title).string(4, s.description);
  if (s.default !== undefined) m.message(5, any(s.default));
  m.strings(19, s.required);
  for (const v of Array.isArray(s.enum) ? s.enum : []) m.message(20, any(v));
  if (isObject(s.additionalProperties)) m.message(21, new Message().message(1, schema(s.additionalProperties)));
  else if (typeof s.additionalProperties === 'boolean') m.message(21, new Message().bool(2, s.additionalProperties));
  if (s.type !== undefined) m.message(22, new Message().strings(1, Array.isArray(s.type) ? s.type : [s.type]));
  if (s.items !== undefined) m.message(23, new Message().messages(1, (Array.isArray(s.items) ? s.items : [s.items]).filter(isObject).map(schema)));
  if (Array.isArray(s.allOf)) m.messages(24, s.allOf.filter(isObject).map(schema));
  if (s.properties !== undefined) m.message(25, namedSchemas(s.properties));
  m.bool(27, s.readOnly);
  return m.messages(31, vendorExtensions(s));
}

/** Properties and Definitions share a shape: repeated NamedSchema additional_properties = 1. */
const namedSchemas = (o: Json | undefined): Message =>
  new Message().messages(
    1,
    entries(o)
      .filter(([, v]) => isObject(v))
      .map(([name, v]) => new Message().string(1, name).message(2, schema(v as JsonObject))),
  );

function parameter(p: JsonObject): Message {
  if (p.$ref !== undefined) return new Message().message(2, new Message().string(1, p.$ref));
  if (p.in === 'body') {
    const body = new Message().string(1, p.description).string(2, p.name).string(3, p.in).bool(4, p.required);
    if (isObject(p.schema)) body.message(5, schema(p.schema));
    return new Message().message(1, new Message().message(1, body.messages(6, vendorExtensions(p))));
  }
  // QueryParameterSubSchema and PathParameterSubSchema: the same first four fields; then type is 6
  // for query (5 is allow_empty_value) and 5 for path; unique_items 20 and 19.
  const query = p.in === 'query';
  if (!query && p.in !== 'path') throw new Error(`OpenAPI v2 protobuf: unsupported parameter location ${String(p.in)}`);
  const sub = new Message()
    .bool(1, p.required)
    .string(2, p.in)
    .string(3, p.description)
    .string(4, p.name)
    .string(query ? 6 : 5, p.type)
    .string(query ? 7 : 6, p.format)
    .bool(query ? 20 : 19, p.uniqueItems)
    .messages(query ? 23 : 22, vendorExtensions(p));
  return new Message().message(1, new Message().message(2, new Message().message(query ? 3 : 4, sub)));
}

const parameters = (v: Json | undefined): Message[] => (Array.isArray(v) ? v.filter(isObject).map(parameter) : []);

function operation(op: JsonObject): Message {
  const responses = new Message().messages(
    1,
    entries(op.responses).map(([code, r]) => {
      const response = new Message().string(1, isObject(r) ? r.description : undefined);
      if (isObject(r) && isObject(r.schema)) response.message(2, new Message().message(1, schema(r.schema)));
      return new Message().string(1, code).message(2, new Message().message(1, response));
    }),
  );
  return new Message()
    .strings(1, op.tags)
    .string(2, op.summary)
    .string(3, op.description)
    .string(5, op.operationId)
    .strings(6, op.produces)
    .strings(7, op.consumes)
    .messages(8, parameters(op.parameters))
    .message(9, responses)
    .strings(10, op.schemes)
    .bool(11, op.deprecated)
    .messages(13, vendorExtensions(op));
}

const METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function pathItem(item: JsonObject): Message {
  const m = new Message().string(1, item.$ref);
  for (const [method, field] of METHODS) if (isObject(item[method])) m.message(field, operation(item[method] as JsonObject));
  return m.messages(9, parameters(item.parameters)).messages(10, vendorExtensions(item));
}

function securityDefinitions(defs: Json | undefined): Message {
  return new Message().messages(
    1,
    entries(defs).map(([name, d]) => {
      if (!isObject(d) || d.type !== 'apiKey') throw new Error(`OpenAPI v2 protobuf: unsupported security definition ${name}`);
      const apiKey = new Message().string(1, d.type).string(2, d.name).string(3, d.in).string(4, d.description).messages(5, vendorExtensions(d));
      return new Message().string(1, name).message(2, new Message().message(2, apiKey));
    }),
  );
}

const securityRequirement = (req: JsonObject): Message =>
  new Message().messages(
    1,
    entries(req).map(([name, scopes]) => new Message().string(1, name).message(2, new Message().strings(1, scopes))),
  );

/** Encodes a Swagger 2.0 JSON document as an `openapi.v2.Document` message. */
export function encodeOpenApiV2(doc: Json): Uint8Array {
  if (!isObject(doc)) throw new Error('OpenAPI v2 protobuf: the document must be an object');
  const m = new Message().string(1, doc.swagger);
  if (isObject(doc.info)) m.message(2, new Message().string(1, doc.info.title).string(2, doc.info.version).string(3, doc.info.description));
  m.string(3, doc.host).string(4, doc.basePath).strings(5, doc.schemes).strings(6, doc.consumes).strings(7, doc.produces);
  if (doc.paths !== undefined) {
    const paths = new Message().messages(1, vendorExtensions(doc.paths as JsonObject));
    paths.messages(
      2,
      entries(doc.paths)
        .filter(([name, item]) => name.startsWith('/') && isObject(item))
        .map(([name, item]) => new Message().string(1, name).message(2, pathItem(item as JsonObject))),
    );
    m.message(8, paths);
  }
  if (doc.definitions !== undefined) m.message(9, namedSchemas(doc.definitions));
  if (Array.isArray(doc.security)) m.messages(12, doc.security.filter(isObject).map(securityRequirement));
  if (doc.securityDefinitions !== undefined) m.message(13, securityDefinitions(doc.securityDefinitions));
  return m.messages(16, vendorExtensions(doc)).finish();
}
