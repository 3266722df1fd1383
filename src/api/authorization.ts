/**
 * Authorization as every room speaks of it: who asks to do what (Kubernetes' authorizer.Attributes),
 * the decision, and the contract an authorizer implements.
 */
export interface CelUserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What is asked: Kubernetes' authorizer.Attributes. */
export interface AuthorizationAttributes {
  user: CelUserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** Resource requests. */
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Non-resource requests. */
  path?: string;
}

export interface AuthorizationDecision {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason?: string;
  /** Set when the authorizer failed to decide. */
  error?: string;
}

/**
 * The contract every authorizer of the chain implements (src/auth: AlwaysAllow, AlwaysDeny, RBAC,
 * Webhook), Kubernetes' authorizer.Authorizer. It is part of the API's vocabulary: auth implements
 * it, http asks it of each request, and the CEL `authorizer` library asks it from admission
 * expressions, each without importing the others.
 */
export interface Authorizer {
  /** Webhooks answer asynchronously; the others may answer at once. */
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
}
