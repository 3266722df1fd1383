/**
 * The authenticated user of a request, as Kubernetes' user.Info: what the authorizer, admission
 * (`request.userInfo`) and audit see. Field names follow authentication.k8s.io/v1 UserInfo.
 * Declared beside the authentication configuration whose claim mappings fill it, so that admission
 * and auth both see it without importing each other.
 */
export interface UserInfo {
  username: string;
  /** '' when the authenticator gives none. */
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}
