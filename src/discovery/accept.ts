/**
 * The Accept header as an ordered list of media ranges (RFC 9110 §12.5.1), the one parser behind
 * every negotiation orchd does: Tables, aggregated discovery, the OpenAPI v2 protobuf.
 *
 * Kubernetes negotiates on parameters, not only on types: `application/json;as=Table;v=v1;g=meta.k8s.io`
 * and plain `application/json` are different answers. So a range keeps its parameters, and callers
 * walk the ranges in the client's order of preference and take the first one they can serve.
 *
 * It lives with discovery, the lowest room that negotiates; src/openapi and src/http use it from here.
 */

/** The media type of every JSON answer. */
export const JSON_TYPE = 'application/json';

export interface MediaRange {
  /** Lower-cased; `*` for a wildcard. */
  type: string;
  /** Lower-cased; `*` for a wildcard. May hold characters outside RFC tokens (kubectl sends `…spec.v2@v1.0+protobuf`). */
  subtype: string;
  /** Parameters other than q, names lower-cased, quoted values unquoted. */
  params: Record<string, string>;
  /** Quality, 0 to 1. Ranges with q=0 ("not acceptable") are dropped by parseAccept. */
  q: number;
}

/** Splits on `sep` outside double-quoted strings (a quoted parameter value may hold `,` or `;`). */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === sep && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const unquote = (v: string): string => (v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, '$1') : v);

function parseRange(text: string): MediaRange | undefined {
  const [full, ...rawParams] = splitOutsideQuotes(text, ';');
  const slash = full.indexOf('/');
  if (slash <= 0) return undefined;
  const type = full.slice(0, slash).trim().toLowerCase();
  const subtype = full
    .slice(slash + 1)
    .trim()
    .toLowerCase();
  if (!type || !subtype || /\s/.test(type + subtype) || (type === '*' && subtype !== '*')) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const raw of rawParams) {
    const eq = raw.indexOf('=');
    if (eq <= 0) continue;
    const name = raw.slice(0, eq).trim().toLowerCase();
    const value = unquote(raw.slice(eq + 1).trim());
    if (name === 'q') {
      const n = Number(value);
      q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 1;
    } else {
      params[name] = value;
    }
  }
  return { type, subtype, params, q };
}

/** How specific a range is: `*\/*` < `type/*` < `type/subtype`. Ties in q go to the more specific. */
const specificity = (r: MediaRange): number => (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2);

/**
 * Media ranges in order of preference: by q (highest first), then by specificity, then as written
 * (the order in which kubectl lists its alternatives is its preference). Malformed ranges and q=0
 * are left out; an absent or empty header gives [].
 *
 * parseAccept('application/json;as=Table;v=v1;g=meta.k8s.io, application/json')
 *   → [{type:'application', subtype:'json', params:{as:'Table', v:'v1', g:'meta.k8s.io'}, q:1},
 *      {type:'application', subtype:'json', params:{}, q:1}]
 */
export function parseAccept(header: string | string[] | undefined): readonly Readonly<MediaRange>[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  let ranges = parsed.get(text);
  if (!ranges) {
    // A client sends the same few headers on every request; past the bound (headers made up per
    // request) the cache starts over rather than grow.
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(text, (ranges = Object.freeze(parseRanges(text))));
  }
  return ranges;
}

/** Accept headers already parsed: every request's answer asks (its format, then whether a Table), three times or so a request. */
const parsed = new Map<string, readonly MediaRange[]>();
const PARSED_MAX = 256;

function parseRanges(text: string): MediaRange[] {
  const ranges = splitOutsideQuotes(text, ',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(parseRange)
    .filter((r): r is MediaRange => r !== undefined && r.q > 0);
  // Array.prototype.sort is stable, so equal ranges keep the client's order.
  return ranges.sort((a, b) => b.q - a.q || specificity(b) - specificity(a));
}

/** Whether a range accepts `type/subtype` (exactly, or through a wildcard). */
export function rangeMatches(range: MediaRange, type: string, subtype: string): boolean {
  return (range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype);
}
