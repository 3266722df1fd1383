/**
 * The contract every authorizer of the chain implements (AlwaysAllow, AlwaysDeny, RBAC, Webhook),
 * Kubernetes' authorizer.Authorizer: attributes of a request in, a decision out. The attributes and
 * decision are the ones the CEL `authorizer` library asks with, so admission expressions and HTTP
 * requests are judged by the same chain.
 */
import type { AuthorizationAttributes, AuthorizationDecision } from '../cel/index.js';

export type { AuthorizationAttributes, AuthorizationDecision };

export interface Authorizer {
  /** Webhooks answer asynchronously; the others may answer at once. */
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
}
