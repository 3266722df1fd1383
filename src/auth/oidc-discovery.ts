/**
 * OpenID Connect discovery: the issuer's configuration document, from
 * `{url}/.well-known/openid-configuration` or the configured `discoveryURL` (used exactly as given).
 * The document's `issuer` must be the configured URL exactly, as go-oidc requires, so a discovery
 * endpoint cannot vouch for another issuer's keys.
 */
import type { GetJson } from './issuer-client.js';

export const WELL_KNOWN_PATH = '/.well-known/openid-configuration';

export interface ProviderMetadata {
  issuer: string;
  jwksUri: string;
}

export const discoveryLocation = (issuerUrl: string, discoveryURL?: string): string => discoveryURL ?? issuerUrl.replace(/\/+$/, '') + WELL_KNOWN_PATH;

export async function discover(get: GetJson, issuerUrl: string, discoveryURL?: string): Promise<ProviderMetadata> {
  const where = discoveryLocation(issuerUrl, discoveryURL);
  const doc = await get(where);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${where}: the discovery document is not a JSON object`);
  const { issuer, jwks_uri: jwksUri } = doc as Record<string, unknown>;
  if (issuer !== issuerUrl) {
    throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuerUrl)} got ${JSON.stringify(issuer)}`);
  }
  if (typeof jwksUri !== 'string' || jwksUri === '') throw new Error(`${where}: the discovery document has no jwks_uri`);
  return { issuer, jwksUri };
}
