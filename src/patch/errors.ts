/**
 * What the patch algorithms report. They know nothing of HTTP: src/http turns each code into the
 * Status Kubernetes answers with (BadPatch → 400, Unprocessable → 422, TooLarge → 413, Conflict → 409).
 */
export type PatchErrorCode = 'BadPatch' | 'Unprocessable' | 'TooLarge' | 'Conflict';

/** One field another manager owns with a different value (server-side apply). */
export interface FieldConflict {
  /** The owner's identity: manager name, operation, apiVersion and subresource. */
  manager: ManagerId;
  /** The field as server-side apply prints it: `.spec.matchConditions[name="a"].expression`. */
  path: string;
}

export interface ManagerId {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
}

export class PatchError extends Error {
  constructor(
    readonly code: PatchErrorCode,
    message: string,
    readonly conflicts: FieldConflict[] = [],
  ) {
    super(message);
    this.name = 'PatchError';
  }
}
