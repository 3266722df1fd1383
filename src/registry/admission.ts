/**
 * What the controllers ask of admission (policy status), through the door.
 */
export * from '../admission/index.js';
