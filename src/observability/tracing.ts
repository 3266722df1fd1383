/**
 * The OpenTelemetry SDK behind the API the instrumented code calls: built from a
 * TracingConfiguration as kube-apiserver builds its tracer provider (parent-based sampling with
 * `samplingRatePerMillion` for root spans and never sampling them when it is unset, batched export
 * over OTLP gRPC without TLS, W3C trace context), and registered as the process's global tracer
 * provider, context manager and propagator. Without a configuration nothing is registered and the
 * API stays the no-op one. serve.ts imports this module only when a configuration is given.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { credentials } from '@grpc/grpc-js';
import { MAX_SAMPLING_RATE_PER_MILLION, type TracingConfiguration } from '../config/tracing.js';

export const SERVICE_NAME = 'orchd';

export interface Tracing {
  /** Exports the spans still batched, then unregisters the globals (the API is a no-op again). */
  shutdown(): Promise<void>;
}

/**
 * The exporter's address for a configured endpoint. The configuration speaks gRPC target syntax
 * (`host:port`, `dns:[//authority/]host:port`, `unix:///path`); the exporter takes a URL whose
 * http:// scheme means "no TLS", which the specification asks for.
 */
export function exporterUrl(endpoint: string): string {
  if (endpoint.startsWith('unix:')) return endpoint;
  if (endpoint.startsWith('unix-abstract:')) {
    throw new Error(`tracing endpoint ${JSON.stringify(endpoint)}: unix-abstract sockets are not supported by orchd's OTLP exporter; use host:port or unix:///path`);
  }
  const dns = /^dns:(?:\/\/[^/]*\/)?(.*)$/.exec(endpoint);
  return `http://${dns ? dns[1] : endpoint}`;
}

/** Throws when tracing is already registered in this process (a second server with tracing). */
export function startTracing(config: TracingConfiguration): Tracing {
  const rate = config.samplingRatePerMillion;
  const root = rate !== undefined && rate > 0 ? new TraceIdRatioBasedSampler(rate / MAX_SAMPLING_RATE_PER_MILLION) : new AlwaysOffSampler();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    sampler: new ParentBasedSampler({ root }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: exporterUrl(config.endpoint), credentials: credentials.createInsecure() }) })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const registered = [context.setGlobalContextManager(contextManager), trace.setGlobalTracerProvider(provider), propagation.setGlobalPropagator(new W3CTraceContextPropagator())];
  const unregister = () => {
    trace.disable();
    context.disable();
    propagation.disable();
  };
  if (registered.includes(false)) {
    // Another server of this process holds the globals: leave them to it.
    if (registered[0]) context.disable();
    if (registered[1]) trace.disable();
    if (registered[2]) propagation.disable();
    contextManager.disable();
    void provider.shutdown();
    throw new Error('tracing: OpenTelemetry is already registered in this process (another server with a tracing configuration)');
  }
  let shutdown: Promise<void> | undefined;
  return {
    shutdown: () => (shutdown ??= provider.shutdown().finally(unregister)),
  };
}
