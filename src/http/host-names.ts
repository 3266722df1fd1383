/** The host names a bind address stands for, shared by tls.ts and certificates.ts (which tls.ts loads only when it makes a certificate). */
import { hostname } from 'node:os';
import { isIP } from 'node:net';

export const isUnspecified = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === '';

/** The names a self-signed certificate for this bind address answers to. */
export function altNamesFor(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  if (!isUnspecified(host)) names.push(host);
  const own = hostname();
  if (own && isIP(own) === 0) names.push(own);
  return [...new Set(names)];
}
