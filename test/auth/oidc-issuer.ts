/**
 * A real OIDC issuer for tests: HTTPS on 127.0.0.1 with its own CA, a discovery document, a JWKS
 * endpoint that counts its fetches, key rotation, and tokens minted with jose.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, type JWK } from 'jose';
import { issueCertificateChain, type CertificateChain } from '../../src/http/certificates.js';

export type Pki = CertificateChain;

/** A CA and a serving certificate for 127.0.0.1/localhost signed by it (usable as a client certificate with clientAuth). */
export function testPki(name = 'test-issuer', opts: { clientAuth?: boolean } = {}): Pki {
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);
  return issueCertificateChain({ caName: `${name}-ca`, name, altNames: ['127.0.0.1', 'localhost'], notBefore, notAfter, clientAuth: opts.clientAuth });
}

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  jwk: JWK;
}

async function signingKey(kid: string, alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey: pair.privateKey, jwk };
}

export interface TokenOptions {
  /** Claims to set or (with undefined) remove; defaults: iss, aud, sub, exp (+1h), iat, nbf. */
  claims?: Record<string, unknown>;
  /** Sign with a key that is not published (bad signature). */
  foreignKey?: boolean;
  kid?: string;
  /** Use this published key instead of the current one. */
  keyId?: string;
  omitKid?: boolean;
}

export class TestIssuer {
  readonly pki = testPki();
  private server!: Server;
  url = '';
  /** The issuer name put in the discovery document (defaults to url): a lying discovery endpoint. */
  advertisedIssuer: string | undefined;
  private keys: SigningKey[] = [];
  private foreign!: SigningKey;
  jwksFetches = 0;
  discoveryFetches = 0;
  /** Path of the discovery document; `/.well-known/openid-configuration` under the issuer path. */
  private readonly issuerPath: string;

  constructor(issuerPath = '') {
    this.issuerPath = issuerPath;
  }

  async start(): Promise<this> {
    this.keys = [await signingKey('key-1', 'RS256')];
    this.foreign = await signingKey('key-1', 'RS256');
    this.server = createServer({ cert: this.pki.cert, key: this.pki.key }, (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const json = (body: unknown) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(body));
      };
      if (path === `${this.issuerPath}/.well-known/openid-configuration` || path === '/custom/discovery') {
        this.discoveryFetches++;
        return json({
          issuer: this.advertisedIssuer ?? this.url,
          jwks_uri: `${this.url}/keys`,
          id_token_signing_alg_values_supported: ['RS256', 'ES256'],
          response_types_supported: ['id_token'],
          subject_types_supported: ['public'],
        });
      }
      if (path === `${this.issuerPath}/keys`) {
        this.jwksFetches++;
        return json({ keys: this.keys.map((k) => k.jwk) });
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.issuerPath}`;
    return this;
  }

  /** Replaces the published keys with a new one (the old one is no longer published). */
  async rotate(kid: string, alg: 'RS256' | 'ES256' = 'ES256'): Promise<void> {
    this.keys = [await signingKey(kid, alg)];
  }

  /** Publishes one more key (both verify). */
  async addKey(kid: string, alg: 'RS256' | 'ES256' = 'ES256'): Promise<void> {
    this.keys.push(await signingKey(kid, alg));
  }

  async token(o: TokenOptions = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { iss: this.url, aud: ['orchd'], sub: 'alice', exp: now + 3600, iat: now, nbf: now - 5 };
    for (const [k, v] of Object.entries(o.claims ?? {})) {
      if (v === undefined) delete claims[k];
      else claims[k] = v;
    }
    const key = o.foreignKey ? this.foreign : o.keyId ? this.keys.find((k) => k.kid === o.keyId)! : this.keys[this.keys.length - 1]!;
    const header = { alg: key.alg, typ: 'JWT', ...(o.omitKid ? {} : { kid: o.kid ?? key.kid }) };
    return new SignJWT(claims).setProtectedHeader(header).sign(key.privateKey);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
