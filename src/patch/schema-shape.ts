/**
 * How the patch algorithms see a field's schema: the child schemas, and the merge behaviour that
 * Kubernetes derives from the list and map extensions (for server-side apply) and from the patch
 * strategy and merge key (for strategic merge patch). One schema feeds both, as it feeds OpenAPI.
 */
import type { Schema } from '../api/schema.js';

/**
 * - scalar: a leaf value (string, number, bool, int-or-string, null).
 * - atomic: a list or map replaced and owned whole (list-type atomic, map-type atomic, untyped).
 * - granular: a struct or a map whose members are merged and owned one by one.
 * - assoc: a list of objects identified by key fields (list-type map).
 * - set: a list of scalars whose values are merged and owned one by one (list-type set).
 */
export type Shape = 'scalar' | 'atomic' | 'granular' | 'assoc' | 'set';

export function shapeOf(schema: Schema | undefined, value: unknown): Shape {
  if (!schema) return typeof value === 'object' && value !== null ? 'atomic' : 'scalar';
  if (schema['x-kubernetes-int-or-string']) return 'scalar';
  if (schema.type === 'array') {
    const listType = schema['x-kubernetes-list-type'];
    if (listType === 'map' && (schema['x-kubernetes-list-map-keys']?.length ?? 0) > 0) return 'assoc';
    if (listType === 'set') return 'set';
    return 'atomic';
  }
  if (schema.type === 'object' || schema.properties || schema.additionalProperties) {
    if (schema['x-kubernetes-map-type'] === 'atomic') return 'atomic';
    if (schema.properties || schema.additionalProperties) return 'granular';
    return 'atomic';
  }
  return 'scalar';
}

/** The schema of a member of an object: a declared property, else the map's value schema. */
export const memberSchema = (schema: Schema | undefined, key: string): Schema | undefined => schema?.properties?.[key] ?? schema?.additionalProperties;

export const listKeys = (schema: Schema | undefined): string[] => schema?.['x-kubernetes-list-map-keys'] ?? [];

/** Strategic merge: the patch strategies of a field (`merge`, `retainKeys`, `replace`). */
export const patchStrategies = (schema: Schema | undefined): string[] =>
  (schema?.['x-kubernetes-patch-strategy'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const patchMergeKey = (schema: Schema | undefined): string | undefined => schema?.['x-kubernetes-patch-merge-key'];
