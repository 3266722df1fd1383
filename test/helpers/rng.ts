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
