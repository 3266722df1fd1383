import { buildAuthorizationChain } from '../auth/authorization-chain.js';
import { rbacAuthorizer } from '../auth/rbac-authorizer.js';
import { rbacEscalationCheck } from '../auth/rbac-escalation.js';
import { ReloadingAuthorizer } from '../auth/reloading-authorizer.js';
import { authorizationDocument } from '../config/authorization.js';
import { reloadableFile } from '../config/reloader.js';
import type { Egress } from '../egress/egress.js';
import type { Logger } from '../observability/logger.js';
import { StoreRbacSource } from '../registry/rbac-source.js';
import type { Store } from '../store/store.js';
import type { Closers } from './closers.js';
import type { ServeOptions } from './serve-options.js';
import { reloadLog } from './reload-log.js';

/**
 * The authorizer chain, built once the store exists (the RBAC authorizer reads it) and before
 * anything listens: a connection file that cannot be read, a match condition that does not compile,
 * RBAC not available stop the start. Without a file, everything is allowed, as kube-apiserver's
 * default AlwaysAllow mode. The server's one RBAC authorizer goes into chainDeps (`rbac`), shared by
 * every chain a reload builds.
 */
export async function configuredAuthorizer(opts: ServeOptions, logger: Logger, egress: Egress, store: Store, closers: Closers) {
  const authorization = opts.config?.authorization;
  const rbacSource = new StoreRbacSource(store);
  closers.push('RBAC source', () => rbacSource.close());
  const chainDeps = { egress, rbac: rbacAuthorizer(rbacSource) };
  let initialChain;
  try {
    initialChain = buildAuthorizationChain(authorization?.value, chainDeps);
  } catch (err) {
    const file = authorization?.file ?? '--authorization-config';
    throw new Error(
      (err as Error).message
        .split('\n')
        .map((line) => `${file}: ${line}`)
        .join('\n'),
    );
  }
  const authorizer = authorization
    ? new ReloadingAuthorizer(initialChain, {
        ...(await reloadableFile(authorization.file, authorizationDocument)),
        deps: chainDeps,
        ...(opts.authorizationReloadIntervalMs !== undefined ? { intervalMs: opts.authorizationReloadIntervalMs } : {}),
        ...reloadLog(logger, 'authorization', authorization.file),
      })
    : initialChain;
  closers.push('authorizer', () => authorizer.close());
  // Escalation prevention only means something when RBAC decides: under AlwaysAllow nobody holds an RBAC grant.
  const escalationCheck = authorization?.value.authorizers.some((a) => a.type === 'RBAC') ? rbacEscalationCheck(rbacSource, authorizer) : undefined;
  // Without a file the chain allows everything: the server then skips the per-request check.
  const configured = authorization ? { authorizer } : {};
  /** Starts re-reading the configuration file, once the server listens. */
  const start = () => {
    if (authorizer instanceof ReloadingAuthorizer) authorizer.start();
  };
  return { configured, escalationCheck, start };
}
