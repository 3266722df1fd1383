/** A CustomResourceDefinition as the tests post it (apiextensions.orch.io/v1). */

const KEEP_ANY = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

export interface CrdOptions {
  scope?: 'Namespaced' | 'Cluster';
  /** Names beside plural and kind (singular, listKind, shortNames). */
  names?: Record<string, unknown>;
  /** The versions; one by default: v1, served and stored, of this schema (any field kept by default). */
  versions?: unknown[];
  schema?: unknown;
  /** More of the spec. */
  spec?: Record<string, unknown>;
}

export function crdOf(group: string, plural: string, kind: string, o: CrdOptions = {}): any {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: o.scope ?? 'Namespaced',
      names: { plural, kind, ...o.names },
      versions: o.versions ?? [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: o.schema ?? KEEP_ANY } }],
      ...o.spec,
    },
  };
}
