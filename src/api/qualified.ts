import type { KindStrategy } from './strategy.js';

/**
 * What an error names about a resource: its group, resource (plural), kind and the object's name
 * (`validatingadmissionpolicies.admissionregistration.orch.io "demo"`). Every room that refuses a
 * request about an object says which with this; src/http words it.
 */
export interface Qualified {
  group: string;
  resource: string;
  name?: string;
  kind?: string;
}

/** What an error names for an object of a kind (Kubernetes' qualified resource plus the name). */
export const qualified = (kind: Pick<KindStrategy, 'group' | 'plural' | 'kind'>, name?: string): Qualified => ({
  group: kind.group,
  resource: kind.plural,
  kind: kind.kind,
  ...(name !== undefined ? { name } : {}),
});
