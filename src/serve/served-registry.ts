import { loadSecret } from '../config/data-dir.js';
import { credentialsFor } from '../config/webhook-admission.js';
import type { Egress } from '../egress/egress.js';
import type { Logger } from '../observability/logger.js';
import { buildRegistry, type RegistryOptions } from '../registry/build.js';
import { KindCatalog, kinds } from '../resources/kinds.js';
import type { Store } from '../store/store.js';
import type { ServeOptions } from './serve-options.js';

/** What the registry is built from that an earlier step made. */
export interface RegistryParts extends Pick<RegistryOptions, 'authorizer' | 'escalationCheck'> {
  store: Store;
  logger: Logger;
  egress: Egress;
  /** The continue-token key replicas share (a list's next page may be asked of another replica); else the data folder's. */
  sharedSecret: Buffer | undefined;
}

/**
 * This server's kinds (the built-in ones, and those its CustomResourceDefinitions define while it
 * runs) and the registry over them: the one door every request and controller goes through, with
 * admission as configured.
 */
export async function servedRegistry(opts: ServeOptions, parts: RegistryParts) {
  const servedKinds = new KindCatalog(kinds);
  const webhookAdmission = opts.config?.admission?.value.plugins.find((p) => p.name === 'MutatingAdmissionWebhook')?.webhookAdmission;
  const objects = buildRegistry(parts.store, servedKinds.all, {
    logger: parts.logger,
    secret: parts.sharedSecret ?? (await loadSecret(opts.dataDir)),
    ...(opts.now ? { now: opts.now } : {}),
    egress: parts.egress,
    ...(parts.authorizer ? { authorizer: parts.authorizer } : {}),
    ...(parts.escalationCheck ? { escalationCheck: parts.escalationCheck } : {}),
    ...(webhookAdmission ? { webhooks: { credentials: (hostPort: string) => credentialsFor(webhookAdmission, hostPort) } } : {}),
  });
  return { servedKinds, objects };
}
