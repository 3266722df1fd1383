/**
 * An OTLP trace collector stand-in: a real gRPC server on 127.0.0.1 serving
 * `opentelemetry.proto.collector.trace.v1.TraceService/Export`, decoding what it receives into
 * plain spans (ids as hex) for tests to look at.
 */
import { Server, ServerCredentials, loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, string | number | boolean>;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  service: string;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface ExportRequest {
  resourceSpans: {
    resource?: { attributes: KeyValue[] };
    scopeSpans: {
      spans: {
        traceId: Buffer;
        spanId: Buffer;
        parentSpanId: Buffer;
        name: string;
        kind: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes: KeyValue[];
        status?: { code: number };
      }[];
    }[];
  }[];
}

const definition = loadSync(fileURLToPath(new URL('./trace-service.proto', import.meta.url)), { longs: String, defaults: true });
const service = ((loadPackageDefinition(definition).opentelemetry as GrpcObject).proto as GrpcObject).collector as GrpcObject as GrpcObject;
const TraceService = ((service.trace as GrpcObject).v1 as GrpcObject).TraceService as ServiceClientConstructor;

const valueOf = (v: AnyValue | undefined): string | number | boolean => v?.stringValue ?? v?.boolValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined) ?? v?.doubleValue ?? '';
const attributesOf = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

export class OtlpCollector {
  private readonly server = new Server();
  readonly spans: CollectedSpan[] = [];
  exports = 0;
  /** 127.0.0.1:port (or the unix:// address it was given), a TracingConfiguration endpoint. */
  endpoint = '';

  /** bind: a gRPC address such as unix:///path; default a free port on 127.0.0.1. */
  async start(bind = '127.0.0.1:0'): Promise<this> {
    this.server.addService(TraceService.service, {
      Export: (call: ServerUnaryCall<ExportRequest, object>, done: sendUnaryData<object>) => {
        this.exports++;
        for (const rs of call.request.resourceSpans) {
          const serviceName = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) {
              this.spans.push({
                traceId: s.traceId.toString('hex'),
                spanId: s.spanId.toString('hex'),
                parentSpanId: s.parentSpanId.toString('hex'),
                name: s.name,
                kind: s.kind,
                startNanos: BigInt(s.startTimeUnixNano),
                endNanos: BigInt(s.endTimeUnixNano),
                attributes: attributesOf(s.attributes),
                statusCode: s.status?.code ?? 0,
                service: serviceName,
              });
            }
          }
        }
        done(null, {});
      },
    });
    const port = await new Promise<number>((resolve, reject) => this.server.bindAsync(bind, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    this.endpoint = bind.startsWith('unix:') ? bind : `127.0.0.1:${port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
