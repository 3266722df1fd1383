/**
 * A version as the time-travel commands' flags and words give it. Apart from the history it names
 * (./history.ts resolves it), and importing nothing: the flag tables that parse it are loaded for a
 * command's --help, which must not load the log's codec.
 */

/** A version given as a number (a resourceVersion), a time (RFC 3339, e.g. 2026-11-26T02:14:00Z) or HEAD (the newest). */
export type VersionSpec = { rv: number } | { timeMs: number } | { head: true };

/** A time without a zone: refused wherever a version is read, never taken for something else (a path). */
export class ZonelessTime extends Error {}

/**
 * A version as a flag's text gives it: a resourceVersion or an RFC 3339 time, which must say its
 * zone (a time without one would be read in whatever zone the machine is set to). The flag table
 * names the flag in its error.
 */
export function parseVersionSpec(text: string): VersionSpec {
  if (text === 'HEAD') return { head: true };
  if (/^\d+$/.test(text)) {
    const rv = Number(text);
    if (!Number.isSafeInteger(rv)) throw new Error(`${text}: not a resourceVersion`);
    return { rv };
  }
  const m = /^(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?)([Zz]|[+-]\d\d:\d\d)?$/.exec(text);
  if (m && m[3] === undefined) throw new ZonelessTime(`${JSON.stringify(text)}: a time must say its zone: ${m[1]}T${m[2]}Z for UTC, or an offset such as ${m[1]}T${m[2]}+02:00`);
  const ms = m ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new Error(`${JSON.stringify(text)}: neither a resourceVersion (a number) nor a time (RFC 3339, e.g. 2026-11-26T02:14:00Z) nor HEAD`);
  return { timeMs: ms };
}
