/**
 * The patch formats as http decodes them (JSON, merge, strategic merge, apply's managed fields), through the door.
 */
export * from '../patch/errors.js';
export * from '../patch/json-patch.js';
export * from '../patch/managed-fields.js';
export * from '../patch/merge-patch.js';
export * from '../patch/strategic-merge.js';
