/** A seeded generator of numbers in [0, 1): the random stream is the same on every run, so a failure can be replayed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}
