/**
 * Selectors as the rooms above the door see them (http, controllers).
 */
export * from '../selectors/field-selector.js';
export * from '../selectors/label-selector.js';
export * from '../selectors/name-formats.js';
