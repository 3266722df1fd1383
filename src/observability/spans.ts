/**
 * Spans for instrumented code, on @opentelemetry/api alone: without a tracing configuration the API
 * is the no-op one and these cost a call or two. Any room may import this file (it imports nothing
 * of orchd); the SDK set-up is provider.ts, which only serve.ts loads.
 */
import { SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';

export const TRACER_NAME = 'orchd';

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

export function tracer(): Tracer {
  // Kept per global provider: the API's provider object changes only when tracing is unregistered
  // (a server closed), and its tracer follows an SDK registered after it was made.
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return cached.tracer;
}

/** Whether the active span (a request's) is recorded: false without tracing, or when not sampled. */
export const activeSpanRecorded = (): boolean => trace.getActiveSpan()?.isRecording() ?? false;

/** Marks a span failed by err (recording it), as every instrumented place does. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs fn inside a child span of the active one; the span ends when fn settles, failed if it throws. */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * An outbound call (an admission or authorizer webhook) as a client span, child of the request's:
 * `call` gets the W3C trace context headers (`traceparent`, `tracestate`) to send along, so the
 * webhook's own spans join the trace.
 *
 *   const review = await outboundCall('admission.webhook', { 'server.address': url.host }, (headers) =>
 *     post(url, body, { headers: { ...headers, 'content-type': 'application/json' } }));
 */
export function outboundCall<T>(name: string, attributes: Attributes, call: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  return inSpan(
    name,
    attributes,
    () => {
      const headers: Record<string, string> = {};
      propagation.inject(context.active(), headers);
      return call(headers);
    },
    SpanKind.CLIENT,
  );
}
