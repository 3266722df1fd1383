import type { Sample } from '../../src/observability/samples.js';

/** Samples by `name{label="value",…}`, as the exposition format writes them (labels in the order given). */
export const keyed = (samples: Iterable<Sample>): Record<string, number> =>
  Object.fromEntries(
    [...samples].map((s) => [
      `${s.name}${
        s.labels
          ? `{${Object.entries(s.labels)
              .map(([k, v]) => `${k}="${v}"`)
              .join(',')}}`
          : ''
      }`,
      s.value,
    ]),
  );
