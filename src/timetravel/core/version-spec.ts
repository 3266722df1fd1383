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
  // Any case, as git takes it: `head` is not a source's name.
  if (text.toUpperCase() === 'HEAD') return { head: true };
  if (/^\d+$/.test(text)) {
    const rv = Number(text);
    if (!Number.isSafeInteger(rv)) throw new Error(`${text}: not a resourceVersion`);
    return { rv };
  }
  const m = /^(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?)([Zz]|[+-]\d\d:\d\d)?$/.exec(text);
  if (m && m[3] === undefined) throw new ZonelessTime(`${JSON.stringify(text)}: a time must say its zone: ${m[1]}T${m[2]}Z for UTC, or an offset such as ${m[1]}T${m[2]}+02:00`);
  const ms = m ? Date.parse(text) : NaN;
  if (m) refuseImpossible(text, m[1], m[2]);
  if (Number.isNaN(ms)) throw new Error(`${JSON.stringify(text)}: neither a resourceVersion (a number) nor a time (RFC 3339, e.g. 2026-11-26T02:14:00Z) nor HEAD`);
  return { timeMs: ms };
}

/** A date or a time of day that no calendar has (Date.parse reads 2026-02-30 as March 2): refused. */
function refuseImpossible(text: string, date: string, time: string): void {
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':').map(Number);
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  const why =
    mo < 1 || mo > 12 ? `there is no month ${mo}` : d < 1 || d > days ? `${date.slice(0, 7)} has no day ${d}` : h > 23 || mi > 59 || (s ?? 0) >= 61 ? `${time} is not a time of day` : undefined;
  if (why) throw new Error(`${JSON.stringify(text)}: not a time: ${why}`);
}
