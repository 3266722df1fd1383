import type { UserInfo } from '../config/user-info.js';

export type { UserInfo };

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The user of a request that presented no credentials and was let in anonymously. */
export const anonymousUser = (): UserInfo => ({ username: ANONYMOUS_USER, uid: '', groups: [UNAUTHENTICATED_GROUP], extra: {} });

/**
 * Every user an authenticator vouches for is in system:authenticated (Kubernetes' group adder),
 * unless it already names system:authenticated or system:unauthenticated.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.groups.includes(UNAUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
