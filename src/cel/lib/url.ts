/**
 * Kubernetes' URL library: url(string), isURL(string) and the URL accessors. Parsing follows Go's
 * url.ParseRequestURI, which Kubernetes uses: an absolute URI (scheme://host/path?query) or an
 * absolute path (/path?query); no fragment splitting.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celEquals, celError, sync } from './common.js';

export class CelURL {
  constructor(
    readonly raw: string,
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly rawQuery: string,
  ) {}
  toJSON(): string {
    return this.raw;
  }
  toString(): string {
    return this.raw;
  }
  celEquals(o: unknown): boolean {
    return o instanceof CelURL && o.raw === this.raw;
  }
}

export function parseURL(raw: string): CelURL | string {
  if (raw === '') return 'empty url';
  if (/[\x00-\x1f\x7f]/.test(raw)) return 'invalid control character in URL';
  let rest = raw;
  let scheme = '';
  const sm = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (sm) {
    scheme = sm[1].toLowerCase();
    rest = rest.slice(sm[0].length);
  } else if (/^[^/?]*:/.test(rest) && !rest.startsWith('/')) {
    return 'missing protocol scheme';
  }
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) return 'invalid URI for request';
  let host = '';
  if (rest.startsWith('//') && scheme !== '') {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = authority.lastIndexOf('@');
    host = at >= 0 ? authority.slice(at + 1) : authority;
    const bad = checkHost(host);
    if (bad) return bad;
  }
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    return `invalid URL escape "${/%.{0,2}/.exec(rest)?.[0] ?? '%'}"`;
  }
  return new CelURL(raw, scheme, host, path, rawQuery);
}

function checkHost(host: string): string | undefined {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return "missing ']' in host";
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d*$/.test(port)) return `invalid port "${port}" after host`;
    return undefined;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return `invalid port "${host.slice(colon)}" after host`;
  return undefined;
}

function hostname(u: CelURL): string {
  const h = u.host;
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

function port(u: CelURL): string {
  const h = u.host;
  const from = h.startsWith('[') ? h.indexOf(']') + 1 : 0;
  const colon = h.indexOf(':', from);
  return colon >= 0 ? h.slice(colon + 1) : '';
}

/** Go's EscapedPath: the path with the characters a path may not hold percent-encoded. */
function escapedPath(u: CelURL): string {
  return u.path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/g, (c) => [...Buffer.from(c, 'utf8')].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join(''));
}

/** Go's url.ParseQuery, keeping the values it can decode. */
function query(u: CelURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of u.rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const [k, v] = eq >= 0 ? [part.slice(0, eq), part.slice(eq + 1)] : [part, ''];
    try {
      const key = decodeURIComponent(k.replace(/\+/g, ' '));
      const value = decodeURIComponent(v.replace(/\+/g, ' '));
      out.set(key, [...(out.get(key) ?? []), value]);
    } catch {
      continue;
    }
  }
  return out;
}

export function registerURL(env: Environment): void {
  env.registerType('kubernetes.URL', CelURL);
  env.registerFunction(
    'url(string): kubernetes.URL',
    (s: string) => {
      const u = parseURL(s);
      if (typeof u === 'string') throw celError(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: ${u}`);
      return u;
    },
    sync,
  );
  env.registerFunction('isURL(string): bool', (s: string) => typeof parseURL(s) !== 'string', sync);
  env.registerFunction('kubernetes.URL.getScheme(): string', (u: CelURL) => u.scheme, sync);
  env.registerFunction('kubernetes.URL.getHost(): string', (u: CelURL) => u.host, sync);
  env.registerFunction('kubernetes.URL.getHostname(): string', hostname, sync);
  env.registerFunction('kubernetes.URL.getPort(): string', port, sync);
  env.registerFunction('kubernetes.URL.getEscapedPath(): string', escapedPath, sync);
  env.registerFunction('kubernetes.URL.getQuery(): map<string, list<string>>', query, sync);
  env.registerFunction('string(kubernetes.URL): string', (u: CelURL) => u.raw, sync);
  env.registerOperator('kubernetes.URL == kubernetes.URL', (a: CelURL, b: CelURL) => celEquals(a, b));
}
