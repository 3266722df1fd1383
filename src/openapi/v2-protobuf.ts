/**
 * The Swagger 2.0 document in gnostic's protobuf encoding (`openapi.v2.Document` of
 * github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto), the form kubectl 1.27 and 1.28 ask
 * for with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
 *
 * kube-apiserver produces it by parsing its JSON document with gnostic and marshalling the message;
 * this maps our JSON document onto the messages a Kubernetes document uses (the subset of
 * OpenAPIv2.proto below, same field numbers) and lets protobufjs write the wire format.
 * What kubectl reads back (k8s.io/kube-openapi pkg/util/proto, cli-runtime's QueryParamVerifier):
 * definitions with properties/items/additionalProperties/$ref, vendor extensions as NamedAny whose
 * Any.yaml holds the value as YAML (JSON text is YAML, and every string in it is quoted, so YAML 1.1
 * never reads "on" or "no" as a boolean), and on each PATCH operation its GVK and query parameters.
 *
 * proto3 rules followed: empty strings and false are not set (protobufjs writes whatever is set); an
 * embedded message that is present is written even when empty, because presence matters
 * (kube-openapi reads an object with `properties: {}` as a kind, and one without as a map).
 */
import protobuf from 'protobufjs';
import type { JsonValue } from '../api/types.js';

type Json = JsonValue;
type JsonObject = { [key: string]: Json };
/** A message as protobufjs encodes it: field name → value. */
type Message = Record<string, unknown>;

const OPENAPI_V2_PROTO = `
syntax = "proto3";
package openapi.v2;
message Document {
  string swagger = 1; Info info = 2; string host = 3; string base_path = 4; repeated string schemes = 5;
  repeated string consumes = 6; repeated string produces = 7; Paths paths = 8; Definitions definitions = 9;
  repeated SecurityRequirement security = 12; SecurityDefinitions security_definitions = 13;
  repeated NamedAny vendor_extension = 16;
}
message Info { string title = 1; string version = 2; string description = 3; }
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Paths { repeated NamedAny vendor_extension = 1; repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  string _ref = 1; Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5;
  Operation options = 6; Operation head = 7; Operation patch = 8; repeated ParametersItem parameters = 9;
  repeated NamedAny vendor_extension = 10;
}
message Operation {
  repeated string tags = 1; string summary = 2; string description = 3; string operation_id = 5;
  repeated string produces = 6; repeated string consumes = 7; repeated ParametersItem parameters = 8;
  Responses responses = 9; repeated string schemes = 10; bool deprecated = 11;
  repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message JsonReference { string _ref = 1; }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter {
  string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5;
  repeated NamedAny vendor_extension = 6;
}
message NonBodyParameter {
  oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4; }
}
message QueryParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; string format = 7;
  bool unique_items = 20; repeated NamedAny vendor_extension = 23;
}
message PathParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; string format = 6;
  bool unique_items = 19; repeated NamedAny vendor_extension = 22;
}
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Schema {
  string _ref = 1; string format = 2; string title = 3; string description = 4; Any default = 5;
  repeated string required = 19; repeated Any enum = 20; AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22; ItemsItem items = 23; repeated Schema all_of = 24; Properties properties = 25;
  bool read_only = 27; repeated NamedAny vendor_extension = 31;
}
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity {
  string type = 1; string name = 2; string in = 3; string description = 4; repeated NamedAny vendor_extension = 5;
}
`;

const DocumentType = protobuf.parse(OPENAPI_V2_PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: Json | undefined): [string, Json][] => (isObject(v) ? Object.entries(v) : []);

/** The set scalar fields of a message: proto3 leaves out empty strings and false. */
function scalars(fields: Record<string, Json | undefined>): Message {
  const m: Message = {};
  for (const [name, v] of Object.entries(fields)) if ((typeof v === 'string' && v !== '') || v === true) m[name] = v;
  return m;
}

/** A repeated string: every element is written, empty ones too. */
const strings = (values: Json | undefined): string[] => (Array.isArray(values) ? values.map(String) : []);

/** Any{yaml}: a value kept as YAML text. */
const any = (value: Json): Message => scalars({ yaml: JSON.stringify(value) });

/** The `x-…` keys of an object as NamedAny messages (vendor_extension fields). */
const vendorExtensions = (o: JsonObject): Message[] =>
  entries(o)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, value]) => ({ ...scalars({ name }), value: any(value) }));

function schema(s: JsonObject): Message {
  const m: Message = scalars({ _ref: s.$ref, format: s.format, title: s.title, description: s.description, read_only: s.readOnly });
  if (s.default !== undefined) m.default = any(s.default);
  m.required = strings(s.required);
  m.enum = (Array.isArray(s.enum) ? s.enum : []).map(any);
  if (isObject(s.additionalProperties)) m.additional_properties = { schema: schema(s.additionalProperties) };
  else if (typeof s.additionalProperties === 'boolean') m.additional_properties = scalars({ boolean: s.additionalProperties });
  if (s.type !== undefined) m.type = { value: strings(Array.isArray(s.type) ? s.type : [s.type]) };
  if (s.items !== undefined) m.items = { schema: (Array.isArray(s.items) ? s.items : [s.items]).filter(isObject).map(schema) };
  if (Array.isArray(s.allOf)) m.all_of = s.allOf.filter(isObject).map(schema);
  if (s.properties !== undefined) m.properties = namedSchemas(s.properties);
  m.vendor_extension = vendorExtensions(s);
  return m;
}

/** Properties and Definitions share a shape: repeated NamedSchema additional_properties = 1. */
const namedSchemas = (o: Json | undefined): Message => ({
  additional_properties: entries(o)
    .filter(([, v]) => isObject(v))
    .map(([name, v]) => ({ ...scalars({ name }), value: schema(v as JsonObject) })),
});

function parameter(p: JsonObject): Message {
  if (p.$ref !== undefined) return { json_reference: scalars({ _ref: p.$ref }) };
  if (p.in === 'body') {
    const body = scalars({ description: p.description, name: p.name, in: p.in, required: p.required });
    if (isObject(p.schema)) body.schema = schema(p.schema);
    body.vendor_extension = vendorExtensions(p);
    return { parameter: { body_parameter: body } };
  }
  if (p.in !== 'query' && p.in !== 'path') throw new Error(`OpenAPI v2 protobuf: unsupported parameter location ${String(p.in)}`);
  const sub = {
    ...scalars({ required: p.required, in: p.in, description: p.description, name: p.name, type: p.type, format: p.format, unique_items: p.uniqueItems }),
    vendor_extension: vendorExtensions(p),
  };
  return { parameter: { non_body_parameter: { [`${p.in}_parameter_sub_schema`]: sub } } };
}

const parameters = (v: Json | undefined): Message[] => (Array.isArray(v) ? v.filter(isObject).map(parameter) : []);

function operation(op: JsonObject): Message {
  const responses = entries(op.responses).map(([code, r]) => {
    const response = scalars({ description: isObject(r) ? r.description : undefined });
    if (isObject(r) && isObject(r.schema)) response.schema = { schema: schema(r.schema) };
    return { ...scalars({ name: code }), value: { response } };
  });
  return {
    ...scalars({ summary: op.summary, description: op.description, operation_id: op.operationId, deprecated: op.deprecated }),
    tags: strings(op.tags),
    produces: strings(op.produces),
    consumes: strings(op.consumes),
    parameters: parameters(op.parameters),
    responses: { response_code: responses },
    schemes: strings(op.schemes),
    vendor_extension: vendorExtensions(op),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function pathItem(item: JsonObject): Message {
  const m = scalars({ _ref: item.$ref });
  for (const method of METHODS) if (isObject(item[method])) m[method] = operation(item[method] as JsonObject);
  return { ...m, parameters: parameters(item.parameters), vendor_extension: vendorExtensions(item) };
}

function securityDefinitions(defs: Json | undefined): Message {
  return {
    additional_properties: entries(defs).map(([name, d]) => {
      if (!isObject(d) || d.type !== 'apiKey') throw new Error(`OpenAPI v2 protobuf: unsupported security definition ${name}`);
      const apiKey = { ...scalars({ type: d.type, name: d.name, in: d.in, description: d.description }), vendor_extension: vendorExtensions(d) };
      return { ...scalars({ name }), value: { api_key_security: apiKey } };
    }),
  };
}

const securityRequirement = (req: JsonObject): Message => ({
  additional_properties: entries(req).map(([name, scopes]) => ({ ...scalars({ name }), value: { value: strings(scopes) } })),
});

/** Encodes a Swagger 2.0 JSON document as an `openapi.v2.Document` message. */
export function encodeOpenApiV2(doc: Json): Uint8Array {
  if (!isObject(doc)) throw new Error('OpenAPI v2 protobuf: the document must be an object');
  const m: Message = scalars({ swagger: doc.swagger, host: doc.host, base_path: doc.basePath });
  if (isObject(doc.info)) m.info = scalars({ title: doc.info.title, version: doc.info.version, description: doc.info.description });
  Object.assign(m, { schemes: strings(doc.schemes), consumes: strings(doc.consumes), produces: strings(doc.produces) });
  if (doc.paths !== undefined) {
    const paths = entries(doc.paths)
      .filter(([name, item]) => name.startsWith('/') && isObject(item))
      .map(([name, item]) => ({ ...scalars({ name }), value: pathItem(item as JsonObject) }));
    m.paths = { vendor_extension: vendorExtensions(doc.paths as JsonObject), path: paths };
  }
  if (doc.definitions !== undefined) m.definitions = namedSchemas(doc.definitions);
  if (Array.isArray(doc.security)) m.security = doc.security.filter(isObject).map(securityRequirement);
  if (doc.securityDefinitions !== undefined) m.security_definitions = securityDefinitions(doc.securityDefinitions);
  m.vendor_extension = vendorExtensions(doc);
  const bytes = DocumentType.encode(m).finish();
  // protobufjs hands back a Buffer on Node; callers get the plain Uint8Array the signature promises.
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}
