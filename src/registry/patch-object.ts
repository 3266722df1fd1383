/**
 * What a PATCH body does to the object it patches: part of the write sequence (read, patch, check,
 * admit, store), so the registry decides which of src/patch's algorithms a patch type runs. A
 * strategic merge follows the kind's schema (its merge keys and list strategies).
 */
import type { Schema } from '../api/schema.js';
import type { KubeObject } from '../api/types.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyStrategicMergePatch } from '../patch/strategic-merge.js';

/** The patch types of the Scale subresource and every other object (strategic merge needs a kind's schema). */
export type PatchType = 'json' | 'merge';

export function patchObject(type: PatchType, current: KubeObject, patch: unknown): unknown;
export function patchObject(type: 'strategic', current: KubeObject, patch: unknown, schema: Schema): unknown;
export function patchObject(type: PatchType | 'strategic', current: KubeObject, patch: unknown, schema?: Schema): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(current, patch);
    case 'merge':
      return applyMergePatch(current, patch);
    case 'strategic':
      return applyStrategicMergePatch(current, patch, schema!);
  }
}
