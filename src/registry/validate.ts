import type { FieldError } from '../api/field-errors.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../resources/metadata.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

/** Kubernetes' ValidateObjectMeta then the kind's own rules: every error, in one answer. */
export function validateCreate(kind: KindStrategy, obj: KubeObject): FieldError[] {
  return [...validateObjectMeta(obj.metadata, kind.namespaced, kind.nameFormat), ...kind.validate(obj)];
}

/**
 * An update is a valid object and a valid transition. A /status write is held only to the status
 * rules when the kind has them (its spec is the stored one, already valid).
 */
export function validateUpdate(kind: KindStrategy, obj: KubeObject, old: KubeObject, subresource?: 'status'): FieldError[] {
  const meta = [...validateObjectMeta(obj.metadata, kind.namespaced, kind.nameFormat), ...validateObjectMetaUpdate(obj.metadata, old.metadata)];
  if (subresource === 'status' && kind.validateStatusUpdate) return [...meta, ...kind.validateStatusUpdate(obj, old)];
  return [...meta, ...(kind.validateUpdate ? kind.validateUpdate(obj, old) : kind.validate(obj))];
}
