import { authenticatorFromConfig } from '../auth/from-config.js';
import type { Egress } from '../egress/egress.js';
import type { Logger } from '../observability/logger.js';
import type { ServeOptions } from './serve-options.js';
import type { Closers } from './closers.js';
import { reloadLog } from './reload-log.js';

/** The authenticator of the configured authentication file (anonymous without one); it starts re-reading the file once the server listens. */
export async function configuredAuthenticator(opts: ServeOptions, logger: Logger, egress: Egress, closers: Closers) {
  const file = opts.config?.authentication;
  const authenticator = await authenticatorFromConfig(file, {
    logger,
    egress,
    ...(opts.authenticationReloadIntervalMs !== undefined ? { reloadIntervalMs: opts.authenticationReloadIntervalMs } : {}),
    ...(file ? reloadLog(logger, 'authentication', file.file) : {}),
  });
  closers.push('authenticator', () => authenticator.close());
  return authenticator;
}
