/** A seeded generator of numbers in [0, 1): the random stream is the same on every run, so a failure can be replayed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

/** A whole number in [min, max], from the stream given (Math.random by default: a crash test's kill point, which varies on purpose). */
export function randomInt(min: number, max: number, random: () => number = Math.random): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** mulberry32, a seeded generator of numbers in [0, 1) with better spread than rng's: the same values for the same seed on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
