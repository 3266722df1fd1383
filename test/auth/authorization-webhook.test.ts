/**
 * The authorizer chain built from real AuthorizationConfiguration documents (the config loader)
 * against a real HTTPS SubjectAccessReview webhook on 127.0.0.1: decisions and reasons, the answer
 * cache as the webhook's hit count shows it (TTL expiry with a test clock), timeout and failure
 * policy both ways, match conditions, the v1beta1 wire shape, selectors, credentials from the
 * connection file, and the configurations that cannot be built.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildAuthorizationChain, type AuthorizerChain } from '../../src/auth/authorization-chain.js';
import type { AuthorizationAttributes, AuthorizationDecision } from '../../src/api/authorization.js';
import { authorizationDocument } from '../../src/config/authorization.js';
import { loadDocumentText } from '../../src/config/load.js';
import { directEgress } from '../../src/egress/egress.js';
import { SarWebhook, webhookEntry } from './sar-webhook.js';
import { keyed } from '../helpers/samples.js';
import { tempDir } from '../helpers/temp.js';

const webhook = new SarWebhook();
let dir: string;
let kubeconfig: string;
let clock = 1_000_000;
const chains: AuthorizerChain[] = [];

beforeAll(async () => {
  await webhook.start();
  dir = tempDir('orchd-authz-');
  kubeconfig = await webhook.kubeconfig(dir);
});
afterAll(async () => {
  for (const c of chains) c.close();
  await webhook.stop();
});
beforeEach(() => {
  webhook.reviews.length = 0;
  webhook.credentials.length = 0;
  webhook.delayMs = 0;
  webhook.failing = { status: 500, count: 0 };
});

function chainOf(authorizers: unknown[], apiVersion = 'apiserver.config.orch.io/v1'): AuthorizerChain {
  const file = join(dir, 'authz.yaml');
  const r = loadDocumentText(file, stringify({ apiVersion, kind: 'AuthorizationConfiguration', authorizers }), authorizationDocument);
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  const chain = buildAuthorizationChain(r.document.value, { egress: directEgress, now: () => clock, retryInitialMs: 5 });
  chains.push(chain);
  return chain;
}

const listEvents = (username: string, groups: string[] = ['system:authenticated'], more: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { username, uid: '', groups, extra: {} },
  verb: 'list',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'events',
  subresource: '',
  namespace: 'default',
  name: '',
  path: '/api/v1/namespaces/default/events',
  ...more,
});
const getVersion = (username: string): AuthorizationAttributes => ({ user: { username, uid: '', groups: [], extra: {} }, verb: 'get', isResourceRequest: false, path: '/version' });

const ask = async (chain: AuthorizerChain, a: AuthorizationAttributes): Promise<AuthorizationDecision> => chain.authorize(a);

describe('a Webhook authorizer', () => {
  it('sends a v1 SubjectAccessReview and follows the answer: allowed, explicitly denied, or no opinion with a reason', async () => {
    const chain = chainOf([webhookEntry('hook', kubeconfig)]);
    expect(await ask(chain, listEvents('alice'))).toEqual({ decision: 'allow' });
    expect(await ask(chain, listEvents('mallory'))).toEqual({ decision: 'deny', reason: 'mallory is banned' });
    expect(await ask(chain, listEvents('bob'))).toEqual({ decision: 'noOpinion', reason: 'bob has no grant' });
    expect(webhook.reviews[0]).toEqual({
      apiVersion: 'authorization.orch.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'events' },
        user: 'alice',
        groups: ['system:authenticated'],
      },
    });
    await ask(chain, getVersion('alice'));
    expect(webhook.reviews[3]!.spec).toEqual({ nonResourceAttributes: { path: '/version', verb: 'get' }, user: 'alice' });
    expect(webhook.credentials[0]).toBeUndefined();
  });

  it('speaks v1beta1 when configured: `group` instead of `groups`', async () => {
    const chain = chainOf([webhookEntry('beta', kubeconfig, { subjectAccessReviewVersion: 'v1beta1' })]);
    expect(await ask(chain, listEvents('alice', ['dev', 'system:authenticated']))).toEqual({ decision: 'allow' });
    const review = webhook.reviews[0]!;
    expect(review.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(review.spec.group).toEqual(['dev', 'system:authenticated']);
    expect(review.spec).not.toHaveProperty('groups');
  });

  it('caches allowed answers for authorizedTTL and the others for unauthorizedTTL, as the hit count shows', async () => {
    const chain = chainOf([webhookEntry('cached', kubeconfig, { authorizedTTL: '5m', unauthorizedTTL: '30s' })]);
    for (let i = 0; i < 3; i++) {
      expect(await ask(chain, listEvents('alice'))).toEqual({ decision: 'allow' });
      expect(await ask(chain, listEvents('bob'))).toEqual({ decision: 'noOpinion', reason: 'bob has no grant' });
    }
    expect(webhook.hits).toBe(2);
    // A cached answer is given synchronously: no promise, no network.
    expect(chain.authorize(listEvents('alice'))).toEqual({ decision: 'allow' });
    // A different request is a different entry.
    await ask(chain, listEvents('alice', undefined, { namespace: 'other' }));
    expect(webhook.hits).toBe(3);

    clock += 31_000;
    await ask(chain, listEvents('alice'));
    await ask(chain, listEvents('bob'));
    expect(webhook.reviews.slice(3).map((r) => r.spec.user)).toEqual(['bob']);
    clock += 5 * 60_000;
    await ask(chain, listEvents('alice'));
    expect(webhook.hits).toBe(5);
    const gauges = keyed(chain.samples());
    expect(gauges['orchd_authorization_webhook_cache_hits_total{name="cached"}']).toBe(6);
    expect(gauges['orchd_authorization_webhook_cache_misses_total{name="cached"}']).toBe(5);
    expect(gauges['orchd_authorization_webhook_evaluations_total{name="cached",result="success"}']).toBe(5);
  });

  it('caches nothing of a kind when v1 turns its caching off', async () => {
    const chain = chainOf([webhookEntry('uncached', kubeconfig, { cacheAuthorizedRequests: false })]);
    await ask(chain, listEvents('alice'));
    await ask(chain, listEvents('alice'));
    await ask(chain, listEvents('bob'));
    await ask(chain, listEvents('bob'));
    expect(webhook.reviews.map((r) => r.spec.user)).toEqual(['alice', 'alice', 'bob']);
  });

  it('shares one call between concurrent askers of the same question', async () => {
    const chain = chainOf([webhookEntry('shared', kubeconfig)]);
    webhook.delayMs = 100;
    const answers = await Promise.all([1, 2, 3, 4].map(() => ask(chain, listEvents('alice'))));
    expect(answers).toEqual(Array(4).fill({ decision: 'allow' }));
    expect(webhook.hits).toBe(1);
  });

  it('applies the timeout: failurePolicy NoOpinion lets the chain go on, Deny stops it with the error', async () => {
    webhook.delayMs = 1500;
    const lenient = chainOf([webhookEntry('slow', kubeconfig, { timeout: '200ms', failurePolicy: 'NoOpinion' }), { type: 'AlwaysAllow', name: 'rest' }]);
    const started = Date.now();
    expect(await ask(lenient, listEvents('bob'))).toEqual({ decision: 'allow' });
    expect(Date.now() - started).toBeLessThan(1400);
    const strict = chainOf([webhookEntry('slow', kubeconfig, { timeout: '200ms', failurePolicy: 'Deny' }), { type: 'AlwaysAllow', name: 'rest' }]);
    const d = await ask(strict, listEvents('bob'));
    expect(d.decision).toBe('deny');
    expect(d.error).toMatch(/^Post "https:\/\/127\.0\.0\.1:\d+\/authorize": timed out after 200ms$/);
    expect(keyed(strict.samples())['orchd_authorization_webhook_evaluations_total{name="slow",result="timeout"}']).toBe(1);
    // Alone, a failing NoOpinion webhook leaves the request un-allowed, with the error.
    const alone = chainOf([webhookEntry('slow', kubeconfig, { timeout: '200ms', failurePolicy: 'NoOpinion' })]);
    expect(await ask(alone, listEvents('bob'))).toMatchObject({ decision: 'noOpinion', error: expect.stringMatching(/timed out/) });
  });

  it('retries answers that say try again (500, 429), with backoff, at most 5 times; never others', async () => {
    const chain = chainOf([webhookEntry('flaky', kubeconfig, { failurePolicy: 'Deny' })]);
    webhook.failing = { status: 500, count: 2 };
    expect(await ask(chain, listEvents('alice'))).toEqual({ decision: 'allow' });
    expect(webhook.hits).toBe(3);
    webhook.failing = { status: 429, count: 10 };
    expect(await ask(chain, listEvents('alice', [], { namespace: 'other' }))).toMatchObject({ decision: 'deny', error: expect.stringMatching(/the server responded with status code 429/) });
    expect(webhook.hits).toBe(8);
    webhook.failing = { status: 403, count: 1 };
    expect(await ask(chain, listEvents('alice', [], { namespace: 'third' }))).toMatchObject({ decision: 'deny', error: expect.stringMatching(/status code 403/) });
    expect(webhook.hits).toBe(9);
    expect(keyed(chain.samples())['orchd_authorization_webhook_evaluations_total{name="flaky",result="error"}']).toBe(8);
  });

  it('treats an unreachable webhook as a failure too, never caching it', async () => {
    const down = await new SarWebhook().start();
    const file = await down.kubeconfig(dir, 'down.kubeconfig');
    await down.stop();
    const chain = chainOf([webhookEntry('down', file, { failurePolicy: 'Deny' })]);
    const first = await ask(chain, listEvents('alice'));
    expect(first).toMatchObject({ decision: 'deny', error: expect.stringMatching(/ECONNREFUSED/) });
    expect(chain.authorize(listEvents('alice'))).toBeInstanceOf(Promise);
  });

  it('skips the webhook when a match condition is false, and applies the failure policy when one errs', async () => {
    const conditions = [{ expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace != 'kube-system'" }, { expression: "!('system:serviceaccounts' in request.groups)" }];
    const chain = chainOf([webhookEntry('matched', kubeconfig, { matchConditions: conditions })]);
    expect(await ask(chain, listEvents('alice', [], { namespace: 'kube-system' }))).toEqual({ decision: 'noOpinion' });
    expect(await ask(chain, listEvents('alice', ['system:serviceaccounts']))).toEqual({ decision: 'noOpinion' });
    expect(await ask(chain, getVersion('alice'))).toEqual({ decision: 'noOpinion' });
    expect(webhook.hits).toBe(0);
    expect(await ask(chain, listEvents('alice'))).toEqual({ decision: 'allow' });
    expect(webhook.hits).toBe(1);
    expect(keyed(chain.samples())['orchd_authorization_webhook_match_condition_exclusions_total{name="matched"}']).toBe(3);

    // Reading a field a non-resource request does not have is an error: failurePolicy decides.
    const erring = [{ expression: "request.resourceAttributes.verb == 'list'" }];
    const deny = chainOf([webhookEntry('erring', kubeconfig, { matchConditions: erring, failurePolicy: 'Deny' })]);
    expect(await ask(deny, getVersion('alice'))).toMatchObject({
      decision: 'deny',
      error: expect.stringMatching(/^cel evaluation error: expression 'request.resourceAttributes.verb == 'list'' resulted in error/),
    });
    const noOpinion = chainOf([webhookEntry('erring', kubeconfig, { matchConditions: erring, failurePolicy: 'NoOpinion' }), { type: 'AlwaysAllow', name: 'rest' }]);
    expect(await ask(noOpinion, getVersion('alice'))).toEqual({ decision: 'allow' });
    expect(webhook.hits).toBe(1);
  });

  it('sends list selectors as requirements, never as raw text', async () => {
    const chain = chainOf([webhookEntry('selectors', kubeconfig)]);
    await ask(chain, listEvents('alice', [], { fieldSelector: 'involvedObject.name=web,type!=Normal', labelSelector: 'app in (a,b),!legacy,tier>3' }));
    expect(webhook.reviews[0]!.spec.resourceAttributes).toEqual({
      namespace: 'default',
      verb: 'list',
      version: 'v1',
      resource: 'events',
      fieldSelector: {
        requirements: [
          { key: 'involvedObject.name', operator: 'In', values: ['web'] },
          { key: 'type', operator: 'NotIn', values: ['Normal'] },
        ],
      },
      labelSelector: {
        requirements: [
          { key: 'app', operator: 'In', values: ['a', 'b'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
    });
  });

  it('presents the token of the connection file', async () => {
    const file = await webhook.kubeconfig(dir, 'token.kubeconfig', { token: 's3cret' });
    const chain = chainOf([webhookEntry('token', file)]);
    await ask(chain, listEvents('alice'));
    expect(webhook.credentials).toEqual(['Bearer s3cret']);
  });
});

describe('the chain', () => {
  it('lets system:masters through before any authorizer, and AlwaysDeny refuses only when nothing after it allows', async () => {
    const deny = chainOf([{ type: 'AlwaysDeny', name: 'deny' }]);
    expect(deny.authorize(listEvents('root', ['system:masters']))).toEqual({ decision: 'allow' });
    expect(deny.authorize(listEvents('alice'))).toEqual({ decision: 'noOpinion', reason: 'Everything is forbidden.' });
    expect(
      chainOf([
        { type: 'AlwaysDeny', name: 'deny' },
        { type: 'AlwaysAllow', name: 'allow' },
      ]).authorize(listEvents('alice')),
    ).toEqual({ decision: 'allow' });
    // An explicit deny stops the chain before a later AlwaysAllow.
    const ordered = chainOf([webhookEntry('first', kubeconfig), { type: 'AlwaysAllow', name: 'allow' }]);
    expect(await ask(ordered, listEvents('mallory'))).toEqual({ decision: 'deny', reason: 'mallory is banned' });
    expect(await ask(ordered, listEvents('bob'))).toEqual({ decision: 'allow' });
    // No configuration: everything is allowed.
    const none = buildAuthorizationChain(undefined, { egress: directEgress });
    expect(none.authorize(listEvents('anyone'))).toEqual({ decision: 'allow' });
  });

  it('gathers the reasons of every authorizer that had no opinion', async () => {
    const chain = chainOf([webhookEntry('hook', kubeconfig), { type: 'AlwaysDeny', name: 'deny' }]);
    expect(await ask(chain, listEvents('bob'))).toEqual({ decision: 'noOpinion', reason: 'bob has no grant\nEverything is forbidden.' });
  });

  it('cannot be built from what orchd cannot reach or compile, naming every field', () => {
    const bad = [
      webhookEntry('cel', kubeconfig, { matchConditions: [{ expression: 'request.user ==' }, { expression: 'request.user' }] }),
      { type: 'Webhook', name: 'incluster', webhook: { ...(webhookEntry('x', kubeconfig).webhook as object), connectionInfo: { type: 'InClusterConfig' } } },
      { type: 'RBAC', name: 'rbac' },
    ];
    let message = '';
    try {
      chainOf(bad);
    } catch (err) {
      message = (err as Error).message;
    }
    const lines = message.split('\n');
    expect(lines[0]).toMatch(/^authorizers\[0\]\.webhook\.matchConditions\[0\]\.expression: Invalid value: "request.user ==": compilation failed/);
    expect(lines[1]).toBe('authorizers[0].webhook.matchConditions[1].expression: Invalid value: "request.user": must evaluate to bool but got string');
    expect(lines[2]).toMatch(/^authorizers\[1\]\.webhook\.connectionInfo\.type: InClusterConfig is not available: orchd does not run inside a cluster/);
    expect(lines[3]).toBe('authorizers[2].type: Unsupported value: "RBAC": RBAC authorizer not available');
    expect(lines).toHaveLength(4);
  });
});
