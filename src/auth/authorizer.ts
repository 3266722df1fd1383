/**
 * The contract every authorizer of the chain implements (AlwaysAllow, AlwaysDeny, RBAC, Webhook),
 * Kubernetes' authorizer.Authorizer: attributes of a request in, a decision out. The attributes and
 * decision are the ones the CEL `authorizer` library asks with, so admission expressions and HTTP
 * requests are judged by the same chain; the contract is declared in src/cel beside them.
 */
export type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../cel/index.js';
