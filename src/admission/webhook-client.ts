/**
 * The HTTPS POST of an AdmissionReview to a webhook, as Kubernetes' webhook client manager makes
 * it: to clientConfig.url with `?timeout=<n>s`, the server certificate verified against caBundle
 * (the system roots when there is none), the credentials the WebhookAdmissionConfiguration's
 * kubeconfig names for the webhook's host:port, and the answer decoded as JSON within the
 * webhook's timeout. Webhooks addressed by URL are dialed through the `controlplane` egress
 * selection, as Kubernetes does (only Service webhooks use `cluster`, and orchd serves no Services).
 *
 * Every failure is a CallFailure whose message is Kubernetes' wording of the reason; the caller
 * turns it into a WebhookCallError that failurePolicy governs. One agent is kept per CA bundle and
 * client certificate (Kubernetes caches its REST clients the same way), at most AGENT_CACHE_SIZE.
 */
import type { Agent } from 'node:https';
import { request } from 'node:https';
import { directEgress, type Egress } from '../egress/egress.js';
import { objectAt, stringAt, isObject } from '../api/json-access.js';
import { outboundCall } from '../observability/spans.js';

/** What the server presents to a webhook (a kubeconfig user). */
export interface WebhookCredentials {
  token?: string;
  cert?: Buffer;
  key?: Buffer;
  username?: string;
  password?: string;
}

export interface WebhookClientOptions {
  egress?: Egress;
  /** The credentials for a webhook at host:port; none when undefined. */
  credentials?: (hostPort: string) => WebhookCredentials | undefined;
}

export class CallFailure extends Error {}

/** Kubernetes' webhook client cache size. */
const AGENT_CACHE_SIZE = 200;

/** What client-go says for an error answer that is not a Status (NewGenericServerResponse). */
function genericServerResponse(code: number, text: string, isText: boolean): string {
  if (code >= 500) return `an error on the server (${JSON.stringify(isText ? text.trim() || 'unknown' : 'unknown')}) has prevented the request from succeeding`;
  switch (code) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return isText ? text.trim() : 'forbidden';
    case 404:
      return 'the server could not find the requested resource';
    default:
      return `the server responded with the status code ${code} but did not return more information`;
  }
}

export class WebhookClient {
  private readonly egress: Egress;
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly opts: WebhookClientOptions = {}) {
    this.egress = opts.egress ?? directEgress;
  }

  /** POSTs the review and resolves its decoded JSON answer; throws CallFailure. */
  async post(clientConfig: unknown, review: unknown, timeoutSeconds: number): Promise<unknown> {
    const svc = objectAt(clientConfig, 'service');
    if (svc) {
      const name = stringAt(svc, 'name');
      const port = isObject(svc) && typeof svc.port === 'number' ? svc.port : 443;
      const target = `https://${name}.${stringAt(svc, 'namespace')}.svc:${port}${stringAt(svc, 'path')}?timeout=${timeoutSeconds}s`;
      throw new CallFailure(`failed to call webhook: Post ${JSON.stringify(target)}: service "${name}" not found (orchd serves no Services: reach the webhook through clientConfig.url)`);
    }
    let url: URL;
    try {
      url = new URL(stringAt(clientConfig, 'url'));
    } catch (e) {
      throw new CallFailure(`Unparsable URL: ${(e as Error).message}`);
    }
    url.search = `?timeout=${timeoutSeconds}s`;
    const target = url.toString();
    const creds = this.opts.credentials?.(url.port ? url.host : `${url.host}:443`);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, */*', 'User-Agent': 'orchd-admission' };
    if (creds?.token) headers.Authorization = `Bearer ${creds.token}`;
    else if (creds?.username !== undefined || creds?.password !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${creds.username ?? ''}:${creds.password ?? ''}`).toString('base64')}`;
    }
    const caBundle = stringAt(clientConfig, 'caBundle');
    const agent = this.agentFor(caBundle ? Buffer.from(caBundle, 'base64') : undefined, creds);
    const reply = await outboundCall('admission.webhook', { 'server.address': url.host }, (trace) => this.send(target, agent, { ...headers, ...trace }, JSON.stringify(review), timeoutSeconds * 1000));
    const isText = /^text\//i.test(reply.contentType);
    if (reply.code < 200 || reply.code > 299) {
      let message = genericServerResponse(reply.code, reply.text, isText);
      try {
        const status: unknown = JSON.parse(reply.text);
        if (isObject(status) && status.kind === 'Status' && typeof status.message === 'string' && status.message) message = status.message;
      } catch {
        // not a Status: the generic wording stands
      }
      throw new CallFailure(`failed to call webhook: ${message}`);
    }
    try {
      return JSON.parse(reply.text);
    } catch (e) {
      throw new CallFailure(`failed to call webhook: couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }

  private send(target: string, agent: Agent, headers: Record<string, string>, body: string, timeoutMs: number): Promise<{ code: number; contentType: string; text: string }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        fn();
      };
      const fail = (why: string) => settle(() => reject(new CallFailure(`failed to call webhook: Post ${JSON.stringify(target)}: ${why}`)));
      const req = request(target, { method: 'POST', agent, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => fail(e.message));
        res.on('end', () => settle(() => resolve({ code: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') })));
      });
      // One deadline for connecting, sending and reading the whole answer, as Kubernetes' context timeout.
      const timer = setTimeout(() => {
        fail('context deadline exceeded');
        req.destroy();
      }, timeoutMs);
      req.on('error', (e) => fail(e.message));
      req.end(body);
    });
  }

  private agentFor(ca: Buffer | undefined, creds: WebhookCredentials | undefined): Agent {
    const key = `${ca?.toString('base64') ?? ''}|${creds?.cert?.toString('base64') ?? ''}`;
    let agent = this.agents.get(key);
    if (agent) {
      // Most recently used last, so the oldest is evicted first.
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    agent = this.egress.httpsAgent('controlplane', { ...(ca ? { ca } : {}), ...(creds?.cert && creds.key ? { cert: creds.cert, key: creds.key } : {}) });
    this.agents.set(key, agent);
    if (this.agents.size > AGENT_CACHE_SIZE) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return agent;
  }
}
