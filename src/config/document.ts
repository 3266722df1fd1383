/**
 * The configuration document kinds orchd reads and the two group versions they come in. Each kind
 * module declares one schema per version it exists in (the fields that version knows: unknown fields
 * are errors, as in Kubernetes' strict decoding) and one reader that turns the raw document, already
 * checked against that schema, into the version-free internal form while validating it.
 */
import type { FieldError, FieldPath } from '../api/field-errors.js';
import type { JsonObject } from '../api/json-access.js';
import type { Schema } from '../api/schema.js';

export const V1BETA1 = 'apiserver.orch.io/v1beta1';
export const V1 = 'apiserver.config.orch.io/v1';
/** The audit Policy's group version (Kubernetes' audit.k8s.io/v1). */
export const AUDIT_V1 = 'audit.orch.io/v1';
/** FaultConfiguration's group version: faults on demand for controllers' tests (issue 39), still alpha. */
export const V1ALPHA1 = 'apiserver.config.orch.io/v1alpha1';
export type GroupVersion = typeof V1BETA1 | typeof V1 | typeof AUDIT_V1 | typeof V1ALPHA1;
/** The group versions of the server configuration kinds; a kind of another group lists its own (DocumentKind.groupVersions). */
export const GROUP_VERSIONS: readonly GroupVersion[] = [V1, V1BETA1];

/** What a reader knows besides the document: its version, and where relative file paths start. */
export interface ReadContext {
  apiVersion: GroupVersion;
  /** Folder of the file being read. */
  baseDir: string;
}

/** One kind: its schema per group version and its reader. */
export interface DocumentKind<T> {
  kind: string;
  schemas: Partial<Record<GroupVersion, Schema>>;
  /** The group versions a document of this kind may name; GROUP_VERSIONS when absent. */
  groupVersions?: readonly GroupVersion[];
  /** Converts and validates; the value is trustworthy only when errors is empty. */
  read(doc: JsonObject, ctx: ReadContext, root: FieldPath): { value: T; errors: FieldError[] };
}
