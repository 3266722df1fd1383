/**
 * A real admission webhook for tests: HTTPS on 127.0.0.1 with its own CA (passed to orchd as
 * caBundle), answering each path with a handler the test sets. It records every review it is
 * sent with the request's headers and client certificate, and can ask for client certificates.
 *
 *   const hook = await new WebhookServer().start();
 *   hook.on('/label', (review) => hook.allow(review, { patch: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }));
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { testPki, type Pki } from '../auth/oidc-issuer.js';

export interface Received {
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  /** Subject CN of the client certificate, when one was presented and verified. */
  clientCN?: string;
  review: any;
}

/** What a handler answers: a review response (sent as 200 JSON), raw bytes with a status, or no answer at all. */
export type Answer = { review: unknown } | { status: number; body: string; contentType?: string } | 'hang';
type Handler = (review: any) => Answer;

export class WebhookServer {
  readonly pki: Pki = testPki('webhook');
  private server!: Server;
  url = '';
  readonly received: Received[] = [];
  private readonly handlers = new Map<string, Handler>();

  /** clientCa: ask for a client certificate and verify it against this CA (PEM). */
  async start(opts: { clientCa?: string } = {}): Promise<this> {
    const tls = { cert: this.pki.cert, key: this.pki.key, ...(opts.clientCa ? { ca: opts.clientCa, requestCert: true, rejectUnauthorized: false } : {}) };
    this.server = createServer(tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const [path, query = ''] = (req.url ?? '').split('?');
        let review: any;
        try {
          review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          review = undefined;
        }
        const socket = req.socket as TLSSocket;
        const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
        this.received.push({ path, query, headers: req.headers, ...(peer?.subject ? { clientCN: String(peer.subject.CN) } : {}), review });
        const handler = this.handlers.get(path);
        const answer: Answer = handler ? handler(review) : { status: 404, body: 'no handler', contentType: 'text/plain' };
        if (answer === 'hang') return; // the connection is closed by the client's timeout or by stop()
        if ('review' in answer) {
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify(answer.review));
          return;
        }
        res.statusCode = answer.status;
        res.setHeader('Content-Type', answer.contentType ?? 'application/json');
        res.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  on(path: string, handler: Handler): void {
    this.handlers.set(path, handler);
  }

  /** The reviews sent to a path. */
  reviews(path: string): any[] {
    return this.received.filter((r) => r.path === path).map((r) => r.review);
  }

  /** The CA bundle orchd verifies this server with (base64 PEM, as clientConfig.caBundle takes it). */
  get caBundle(): string {
    return Buffer.from(this.pki.caPem).toString('base64');
  }

  /** A v1 answer to a review: allowed, with an optional JSONPatch and warnings. */
  allow(review: any, extra: { patch?: unknown[]; warnings?: string[] } = {}): Answer {
    const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
    if (extra.patch) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(extra.patch)).toString('base64');
    }
    if (extra.warnings) response.warnings = extra.warnings;
    return { review: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response } };
  }

  deny(review: any, status: Record<string, unknown>, warnings?: string[]): Answer {
    return { review: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: false, status, ...(warnings ? { warnings } : {}) } } };
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A JSONPatch that sets one label, whether or not the object has labels yet. */
export function addLabel(object: any, key: string, value: string): unknown[] {
  const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
  return object?.metadata?.labels ? [{ op: 'add', path: `/metadata/labels/${escaped}`, value }] : [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }];
}
