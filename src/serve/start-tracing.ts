import type { ServerConfig } from '../config/server-config.js';
import type { Logger } from '../observability/logger.js';
import type { Closers } from './closers.js';

/**
 * Tracing, loaded only when configured (else the OpenTelemetry API stays the no-op one), and pushed
 * first so that it closes last: the spans of the final writes end when the log made them durable.
 */
export async function startTracing(config: ServerConfig['tracing'], logger: Logger, closers: Closers): Promise<void> {
  if (!config) return;
  const tracing = (await import('../observability/tracing.js')).startTracing(config.value);
  // Spans the collector did not take (it is down) are lost, as kube-apiserver loses them: a
  // telemetry failure, not a failed shutdown.
  closers.push('tracing', () => tracing.shutdown().catch((err: unknown) => logger.warn('tracing: spans not delivered at shutdown', { error: err instanceof Error ? err.message : String(err) })));
}
