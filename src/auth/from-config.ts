/** The server's authenticator from its AuthenticationConfiguration: the configured authenticators, reloaded from their file when there is one. */
import type { AuthenticationConfiguration } from '../config/authentication.js';
import { authenticationDocument } from '../config/authentication.js';
import { reloadableFile } from '../config/reloader.js';
import type { LoadedDocument } from '../config/load.js';
import type { Egress } from '../egress/egress.js';
import type { Logger } from '../observability/logger.js';
import { RequestAuthenticator, type Authenticator } from './authenticate.js';
import { ReloadingAuthenticator } from './reloading-authenticator.js';

export async function authenticatorFromConfig(
  authentication: LoadedDocument<AuthenticationConfiguration> | undefined,
  o: { logger: Logger; egress: Egress; reloadIntervalMs?: number; onReloaded?: () => void; onFailed?: (problems: string[]) => void },
): Promise<Authenticator & { start(): void; close(): void }> {
  // Built before anything opens: an authenticator that cannot be built (CEL) stops the start.
  const authOptions = {
    egress: o.egress,
    onInitError: (issuer: string, err: Error) => o.logger.error('oidc authenticator: initializing (retried every 10s)', { issuer, error: err.message }),
    onInitialized: (issuer: string, jwksUri: string) => o.logger.info('oidc authenticator: initialized', { issuer, jwksUri }),
  };
  const initial = new RequestAuthenticator(authentication?.value, authOptions);
  if (!authentication) return initial;
  return new ReloadingAuthenticator(initial, {
    ...(await reloadableFile(authentication.file, authenticationDocument)),
    build: (config) => new RequestAuthenticator(config, authOptions),
    ...(o.reloadIntervalMs !== undefined ? { intervalMs: o.reloadIntervalMs } : {}),
    ...(o.onReloaded ? { onReloaded: o.onReloaded } : {}),
    ...(o.onFailed ? { onFailed: o.onFailed } : {}),
  });
}
