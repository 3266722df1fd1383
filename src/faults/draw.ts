/**
 * The seeded draws behind every fault decision: a number in [0, 1) from (seed, generation, rule
 * index, ordinal, salt) alone, never the clock or Math.random, so the same requests in the same
 * order meet the same faults run after run. A hash rather than a generator stream: each rule's
 * decisions do not depend on how many draws other rules made.
 */

/** murmur3's finalizer: every input bit moves every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const TWO_32 = 2 ** 32;

export interface DrawKey {
  seed: number;
  /** How many times the rules were replaced: set() starts a new sequence with the same seed. */
  generation: number;
  rule: number;
  ordinal: number;
}

/** A uniform number in [0, 1); salt tells apart the draws one decision needs (hit, latency). */
export function draw(k: DrawKey, salt = 0): number {
  let h = fmix((k.seed >>> 0) ^ 0x9e3779b9);
  h = fmix(h ^ Math.floor(k.seed / TWO_32));
  h = fmix(h ^ Math.imul(k.generation + 1, 0x27d4eb2f));
  h = fmix(h ^ Math.imul(k.rule + 1, 0x165667b1));
  h = fmix(h ^ (k.ordinal >>> 0));
  h = fmix(h ^ Math.floor(k.ordinal / TWO_32));
  h = fmix(h ^ Math.imul(salt + 1, 0x61c88647));
  return h / TWO_32;
}

/** An integer in [min, max], drawn. */
export const drawBetween = (k: DrawKey, min: number, max: number, salt: number): number => min + Math.floor(draw(k, salt) * (max - min + 1));
