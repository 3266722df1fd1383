/**
 * The top-level shape every kind shares: apiVersion, kind and metadata beside its own fields.
 */
import { objectMetaSchema } from './meta-schema.js';
import { obj, str, type Schema } from '../api/schema.js';

export function kindSchema(refName: string, description: string, properties: Record<string, Schema>): Schema {
  return obj(
    refName,
    {
      apiVersion: str('Versioned schema of this representation; the server converts recognized versions.'),
      kind: str('REST resource this object represents, in CamelCase; cannot be updated.'),
      metadata: objectMetaSchema,
      ...properties,
    },
    { description },
  );
}
