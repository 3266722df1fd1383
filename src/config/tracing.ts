/**
 * TracingConfiguration (apiserver.orch.io/v1beta1 and apiserver.config.orch.io/v1, same members):
 * where spans are exported and how often they are sampled. Validation follows Kubernetes'
 * component-base: a sampling rate in [0, 1000000] and an endpoint gRPC can dial (no scheme, or dns,
 * unix, unix-abstract).
 */
import { FieldPath, invalid, type FieldError } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import { int, obj, str, type Schema } from '../api/schema.js';
import { optNumber, optString } from './checks.js';
import { V1, V1BETA1, type DocumentKind, type ReadContext } from './document.js';

/** The standard OTLP gRPC address. */
export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317';
export const MAX_SAMPLING_RATE_PER_MILLION = 1_000_000;

export interface TracingConfiguration {
  endpoint: string;
  /** Absent: follow the parent span's decision, and never sample a root span. */
  samplingRatePerMillion?: number;
}

const schema: Schema = obj(undefined, { apiVersion: str(), kind: str(), endpoint: str(), samplingRatePerMillion: int() });

function endpointErrors(endpoint: string, path: FieldPath): FieldError[] {
  // gRPC target syntax: an address without "//" is a DNS name.
  const target = endpoint.includes('//') ? endpoint : `dns://${endpoint}`;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(target)?.[1];
  if (scheme === undefined) return [invalid(path, target, 'missing protocol scheme')];
  if (['dns', 'unix', 'unix-abstract'].includes(scheme)) return [];
  return [invalid(path, target, `unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`)];
}

function readTracing(doc: JsonObject, _ctx: ReadContext, root: FieldPath): { value: TracingConfiguration; errors: FieldError[] } {
  const errs: FieldError[] = [];
  const endpoint = optString(doc, 'endpoint');
  const rate = optNumber(doc, 'samplingRatePerMillion');
  if (rate !== undefined && rate < 0) errs.push(invalid(root.child('samplingRatePerMillion'), rate, 'sampling rate must be positive'));
  if (rate !== undefined && rate > MAX_SAMPLING_RATE_PER_MILLION) {
    errs.push(invalid(root.child('samplingRatePerMillion'), rate, 'sampling rate per million must be less than or equal to one million'));
  }
  if (endpoint !== undefined) errs.push(...endpointErrors(endpoint, root.child('endpoint')));
  return { value: { endpoint: endpoint ?? DEFAULT_TRACING_ENDPOINT, ...(rate !== undefined ? { samplingRatePerMillion: rate } : {}) }, errors: errs };
}

export const tracingDocument: DocumentKind<TracingConfiguration> = {
  kind: 'TracingConfiguration',
  schemas: { [V1BETA1]: schema, [V1]: schema },
  read: readTracing,
};
