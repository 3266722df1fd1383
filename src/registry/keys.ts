/**
 * Objects are named by their storage keys on both sides of the door, `<group>/<plural>/<namespace>/<name>`
 * (store/keys.ts): a controller's index and the /debug/timeline page hold keys, and find the kind and
 * the namespace in them.
 */
export { collectionOf, splitKey } from '../store/keys.js';
