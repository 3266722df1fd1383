/**
 * The outside parties of an authenticated, authorized orchd, in the harness process: a CA with a
 * serving certificate for 127.0.0.1 (used by orchd too, so both runs being compared pay the same
 * TLS), and one HTTPS server that is both the OIDC issuer (discovery, JWKS) and the
 * SubjectAccessReview webhook (allows everything). It counts JWKS fetches and reviews, so a run can
 * say how often orchd's caches missed.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SignJWT, exportJWK } from 'jose';
import { stringify } from 'yaml';
import { issueCertificateChain } from '../../src/http/certificates.js';

export class AuthPeers {
  reviews = 0;
  jwksFetches = 0;
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  private readonly signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  private server!: Server;
  url = '';

  constructor() {
    const pki = issueCertificateChain({
      caName: 'bench-ca',
      name: 'bench',
      altNames: ['127.0.0.1', 'localhost'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 24 * 3600_000),
    });
    this.caPem = pki.caPem;
    this.certPem = pki.cert;
    this.keyPem = pki.key;
  }

  async start(): Promise<this> {
    const jwk = { ...(await exportJWK(this.signing.publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
    this.server = createServer({ cert: this.certPem, key: this.keyPem }, (req, res) => {
      const json = (body: unknown) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(body));
      };
      const path = (req.url ?? '').split('?')[0];
      if (path === '/.well-known/openid-configuration') return json({ issuer: this.url, jwks_uri: `${this.url}/jwks` });
      if (path === '/jwks') {
        this.jwksFetches++;
        return json({ keys: [jwk] });
      }
      if (path === '/authorize' && req.method === 'POST') {
        this.reviews++;
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string };
          json({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: { allowed: true } });
        });
        return;
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A token for `user`, valid for an hour. */
  token(user: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ sub: user })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
      .setIssuer(this.url)
      .setAudience('orchd')
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(this.signing.privateKey);
  }

  /**
   * Writes into `dir` the serving pair, an AuthenticationConfiguration trusting this issuer and an
   * AuthorizationConfiguration with one cached webhook; returns the orchd flags for each setup.
   */
  async files(dir: string): Promise<{ tls: string[]; authn: string[]; authz: string[] }> {
    const at = (name: string) => join(dir, name);
    await writeFile(at('serving.crt'), this.certPem);
    await writeFile(at('serving.key'), this.keyPem);
    await writeFile(
      at('authn.yaml'),
      stringify({
        apiVersion: 'apiserver.config.orch.io/v1',
        kind: 'AuthenticationConfiguration',
        jwt: [{ issuer: { url: this.url, certificateAuthority: this.caPem, audiences: ['orchd'] }, claimMappings: { username: { claim: 'sub', prefix: '' } } }],
      }),
    );
    await writeFile(
      at('webhook.kubeconfig'),
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'authz', cluster: { server: `${this.url}/authorize`, 'certificate-authority-data': Buffer.from(this.caPem).toString('base64') } }],
        users: [{ name: 'orchd', user: {} }],
        contexts: [{ name: 'authz', context: { cluster: 'authz', user: 'orchd' } }],
        'current-context': 'authz',
      }),
    );
    await writeFile(
      at('authz.yaml'),
      stringify({
        apiVersion: 'apiserver.config.orch.io/v1',
        kind: 'AuthorizationConfiguration',
        authorizers: [
          {
            type: 'Webhook',
            name: 'bench',
            webhook: {
              timeout: '3s',
              authorizedTTL: '5m',
              unauthorizedTTL: '30s',
              subjectAccessReviewVersion: 'v1',
              matchConditionSubjectAccessReviewVersion: 'v1',
              failurePolicy: 'Deny',
              connectionInfo: { type: 'KubeConfigFile', clusterConfigFile: at('webhook.kubeconfig') },
              matchConditions: [],
            },
          },
        ],
      }),
    );
    const tls = ['--tls-cert-file', at('serving.crt'), '--tls-private-key-file', at('serving.key')];
    return { tls, authn: [...tls, '--authentication-config', at('authn.yaml')], authz: [...tls, '--authentication-config', at('authn.yaml'), '--authorization-config', at('authz.yaml')] };
  }
}
