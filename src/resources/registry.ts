import type { KindStrategy } from './strategy.js';

/** Every kind orchd serves. Adding a kind is one file in this folder plus its line here. */
export const kinds: KindStrategy[] = [];
