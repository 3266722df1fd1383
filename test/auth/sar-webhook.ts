/**
 * A real SubjectAccessReview webhook for tests: HTTPS on 127.0.0.1 with its own CA, reached through
 * a client connection file (kubeconfig) written next to it. It records every review it receives and
 * answers with `decide` (by default: users named alice* allowed, mallory explicitly denied, everyone
 * else not allowed with a reason), after `delayMs` when set.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { testPki } from './oidc-issuer.js';

export interface Review {
  apiVersion: string;
  kind: string;
  spec: Record<string, any>;
}
export type ReviewStatus = { allowed: boolean; denied?: boolean; reason?: string };

export function defaultDecision(review: Review): ReviewStatus {
  const user: string = review.spec.user ?? '';
  if (user.startsWith('alice')) return { allowed: true };
  if (user === 'mallory') return { allowed: false, denied: true, reason: 'mallory is banned' };
  return { allowed: false, reason: `${user || 'nobody'} has no grant` };
}

export class SarWebhook {
  readonly pki = testPki('sar-webhook');
  readonly reviews: Review[] = [];
  /** Authorization headers seen, one per review. */
  readonly credentials: (string | undefined)[] = [];
  /** The W3C traceparent header of each review (tracing). */
  readonly traceparents: (string | undefined)[] = [];
  decide: (review: Review) => ReviewStatus = defaultDecision;
  delayMs = 0;
  /** The next `count` reviews are answered with this HTTP status instead. */
  failing = { status: 500, count: 0 };
  private server!: Server;
  url = '';

  get hits(): number {
    return this.reviews.length;
  }

  async start(): Promise<this> {
    this.server = createServer({ cert: this.pki.cert, key: this.pki.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
        this.reviews.push(review);
        this.credentials.push(req.headers.authorization);
        this.traceparents.push(req.headers.traceparent as string | undefined);
        const answer = () => {
          if (res.destroyed) return;
          res.setHeader('Content-Type', 'application/json');
          if (this.failing.count > 0) {
            this.failing.count--;
            res.statusCode = this.failing.status;
            return res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: this.failing.status }));
          }
          res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: this.decide(review) }));
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/authorize`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Writes a client connection file for this webhook into `dir`; returns its path. */
  async kubeconfig(dir: string, name = 'sar-webhook.kubeconfig', user: Record<string, unknown> = {}): Promise<string> {
    const file = join(dir, name);
    await writeFile(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'authz', cluster: { server: this.url, 'certificate-authority-data': Buffer.from(this.pki.caPem).toString('base64') } }],
        users: [{ name: 'orchd', user }],
        contexts: [{ name: 'webhook', context: { cluster: 'authz', user: 'orchd' } }],
        'current-context': 'webhook',
      }),
    );
    return file;
  }
}

/** A Webhook authorizer entry of an AuthorizationConfiguration (v1), with test-friendly defaults. */
export function webhookEntry(name: string, clusterConfigFile: string, webhook: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'Webhook',
    name,
    webhook: {
      timeout: '2s',
      authorizedTTL: '5m',
      unauthorizedTTL: '30s',
      subjectAccessReviewVersion: 'v1',
      matchConditionSubjectAccessReviewVersion: 'v1',
      failurePolicy: 'NoOpinion',
      connectionInfo: { type: 'KubeConfigFile', clusterConfigFile },
      ...webhook,
    },
  };
}
