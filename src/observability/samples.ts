/**
 * Readings that other rooms hand to /metrics at scrape time (counts an authorizer keeps, the reload
 * state of a configuration file): typed samples, never a name with its labels folded into a string.
 */
export interface Sample {
  name: string;
  help: string;
  /** A counter only rises (a total since the start); a gauge is a reading. */
  type: 'counter' | 'gauge';
  labels?: Readonly<Record<string, string>>;
  value: number;
}

/** Read at every scrape. */
export type SampleSource = () => Iterable<Sample>;
