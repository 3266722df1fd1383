import { admissionFor, type WebhookAdmissionOptions } from '../admission/index.js';
import { alwaysAllow } from '../auth/authorization-chain.js';
import type { Authorizer } from '../cel/index.js';
import type { Egress } from '../egress/egress.js';
import type { Logger } from '../observability/logger.js';
import type { KindStrategy } from '../api/strategy.js';
import { ContinueTokens } from '../store/continue-token.js';
import type { Store } from '../store/store.js';
import { Registry } from './registry.js';
import { withRbacEscalationPrevention, type EscalationCheck } from './rbac-escalation-hook.js';

export interface RegistryOptions {
  logger: Logger;
  /** The key continue tokens are signed with (replicas share it: any of them continues a list); default a fresh one. */
  secret?: Buffer;
  /** What admission expressions' `authorizer` asks; without one everything is allowed (AlwaysAllow). */
  authorizer?: Authorizer;
  /** How outbound HTTPS (webhooks) is dialed per egress selection; default direct. */
  egress?: Egress;
  /** How admission webhooks are dialed and the credentials they are shown. */
  webhooks?: WebhookAdmissionOptions;
  /** RBAC's escalation prevention on writes of roles and bindings (when RBAC is in the chain). */
  escalationCheck?: EscalationCheck;
  /** The clock of creation and deletion timestamps (ms since the epoch); default Date.now. */
  now?: () => number;
}

/** The registry every read and write goes through: the kinds' strategies, admission as configured, the store. */
export function buildRegistry(store: Store, kinds: readonly KindStrategy[], opts: RegistryOptions): Registry {
  const admission = admissionFor(store, kinds, {
    ...opts.webhooks,
    ...(opts.egress ? { egress: opts.egress } : {}),
    onFailOpen: (webhook, error) => opts.logger.warn('failed calling webhook, failing open', { webhook, error }),
    authorizer: opts.authorizer ?? alwaysAllow,
  });
  return new Registry(
    store,
    { now: opts.now ? () => new Date(opts.now!()) : () => new Date() },
    opts.escalationCheck ? withRbacEscalationPrevention(admission, opts.escalationCheck) : admission,
    opts.secret ? new ContinueTokens(opts.secret) : undefined,
  );
}
