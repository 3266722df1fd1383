/** The served API groups that more than one room names (the `orch.io` spelling of Kubernetes' groups). */
export const RBAC_GROUP = 'rbac.authorization.orch.io';
