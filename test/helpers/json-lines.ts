/** The JSON values of a text of one per line (a watch, an audit log, `-o json` of the time-travel commands), empty lines skipped. */
export function jsonLines<T = any>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}
