/**
 * The server span of one HTTP request: its parent is the client's W3C `traceparent` when it sends
 * one (so the sampler follows the client's decision), and every span the request causes
 * (admission, log append, response write, webhook calls) is its child through the active context.
 * The span ends when the response is done, with its status code.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { tracer } from '../observability/spans.js';

export function traceRequest(req: IncomingMessage, res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method ?? 'GET';
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER }, parent);
  // Not sampled: nothing to record, but the (non-recording) span still carries the decision to the children.
  if (span.isRecording()) {
    span.setAttributes({
      'http.request.method': method,
      'url.path': (req.url ?? '/').split('?')[0],
      ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
    });
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      // A server span fails for server errors only; a 4xx is the client's.
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  }
  return context.with(trace.setSpan(parent, span), handle);
}
