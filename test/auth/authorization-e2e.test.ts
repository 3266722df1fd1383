/**
 * orchd started with an AuthorizationConfiguration (and JWT authentication from a real OIDC issuer
 * on 127.0.0.1): every request, WebSocket watches included, is authorized by the chain after
 * authentication; refusals are Kubernetes' 403 Status; the webhook's cache shows in its hit count
 * and in /metrics; system:masters passes untouched; kubectl with --token is allowed or refused; a
 * ValidatingAdmissionPolicy's `authorizer` checks are answered by the same chain; the file is
 * reloaded while running, keeping the last good chain when a new one is broken.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { stringify } from 'yaml';
import { loadServerConfig } from '../../src/config/server-config.js';
import { type Running } from '../../src/serve.js';
import { startServer } from '../helpers/server.js';
import { runKubectl, versionedKubectl } from '../helpers/kubectl.js';
import { httpsCall } from './https-call.js';
import { TestIssuer } from './oidc-issuer.js';
import { SarWebhook, defaultDecision, webhookEntry, type Review } from './sar-webhook.js';
import { replaceFile } from '../helpers/replace-file.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/poll.js';

const EVENTS = '/apis/events.orch.io/v1/namespaces/default/events';
const ADM = '/apis/admissionregistration.orch.io/v1';

const issuer = new TestIssuer();
const webhook = new SarWebhook();
let dir: string;
const running: Running[] = [];

/** Discovery and OpenAPI are open to everyone (as Kubernetes' system:discovery role); the rest is the default decision. */
const decide = (r: Review) => (/^\/(api|apis|openapi)(\/|$)/.test(r.spec.nonResourceAttributes?.path ?? '') ? { allowed: true } : defaultDecision(r));

beforeAll(async () => {
  await issuer.start();
  await webhook.start();
  dir = tempDir('orchd-authz-e2e-');
});
afterAll(async () => {
  for (const r of running) await r.close();
  await webhook.stop();
  await issuer.stop();
});
beforeEach(() => {
  webhook.decide = decide;
  webhook.delayMs = 0;
});

const authentication = () => ({
  apiVersion: 'apiserver.config.orch.io/v1',
  kind: 'AuthenticationConfiguration',
  jwt: [
    {
      issuer: { url: issuer.url, certificateAuthority: issuer.pki.caPem, audiences: ['orchd'] },
      claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: '' } },
    },
  ],
});
const authorization = (authorizers: unknown[]) => ({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers });

interface Started {
  server: Running;
  ca: Buffer;
  authzFile: string;
}

async function start(name: string, authorizers: unknown[], authorizationReloadIntervalMs?: number): Promise<Started> {
  const authnFile = join(dir, `${name}-authn.yaml`);
  const authzFile = join(dir, `${name}-authz.yaml`);
  await writeFile(authnFile, stringify(authentication()));
  await writeFile(authzFile, stringify(authorization(authorizers)));
  const loaded = loadServerConfig({ authentication: authnFile, authorization: authzFile });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  const dataDir = join(dir, `${name}-data`);
  const server = await startServer({
    dataDir,
    config: loaded.config,
    policyStatus: true,
    ...(authorizationReloadIntervalMs ? { authorizationReloadIntervalMs } : {}),
  });
  running.push(server);
  return { server, ca: await readFile(join(dataDir, 'apiserver.crt')), authzFile };
}

const tokens = new Map<string, string>();
async function as(user: string, groups: string[] = []): Promise<Record<string, string>> {
  const key = `${user}/${groups.join(',')}`;
  if (!tokens.has(key)) tokens.set(key, await issuer.token({ claims: { sub: user, groups } }));
  return { authorization: `Bearer ${tokens.get(key)}` };
}

const forbiddenStatus = (message: string, details: Record<string, string>) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403 });

describe('orchd with a webhook authorizer', () => {
  let s: Started;
  let kubeconfig: string;
  const get = async (path: string, user: string, groups: string[] = []) => httpsCall(s.server.url, s.ca, 'GET', path, await as(user, groups));

  beforeAll(async () => {
    kubeconfig = await webhook.kubeconfig(dir);
    s = await start('main', [webhookEntry('hook', kubeconfig)]);
  });

  it('lets an allowed user in and refuses the others with Kubernetes 403 wording', async () => {
    expect((await get(EVENTS, 'alice')).status).toBe(200);
    expect((await get('/api/v1/namespaces/default/events', 'bob')).body).toEqual(
      forbiddenStatus('events is forbidden: User "bob" cannot list resource "events" in API group "" in the namespace "default": bob has no grant', { kind: 'events' }),
    );
    expect((await get(`${EVENTS}/e1`, 'bob')).body).toEqual(
      forbiddenStatus('events.events.orch.io "e1" is forbidden: User "bob" cannot get resource "events" in API group "events.orch.io" in the namespace "default": bob has no grant', {
        name: 'e1',
        group: 'events.orch.io',
        kind: 'events',
      }),
    );
    expect((await get(`${ADM}/validatingadmissionpolicies`, 'mallory')).body.message).toBe(
      'validatingadmissionpolicies.admissionregistration.orch.io is forbidden: User "mallory" cannot list resource "validatingadmissionpolicies" in API group "admissionregistration.orch.io" at the cluster scope: mallory is banned',
    );
    expect((await get('/version', 'bob')).body).toEqual(forbiddenStatus('forbidden: User "bob" cannot get path "/version": bob has no grant', {}));
    // Authorization comes before routing: a path that names nothing is refused, not missing, for bob.
    expect((await get('/nothing/here', 'bob')).status).toBe(403);
    expect((await get('/nothing/here', 'alice')).status).toBe(404);
  });

  it('asks the webhook once per question while its answer is cached, as its hit count and /metrics show', async () => {
    const before = webhook.hits;
    for (let i = 0; i < 5; i++) expect((await get(`${EVENTS}?limit=1`, 'alice-cache')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(`${EVENTS}?limit=1`, 'bob-cache')).status).toBe(403);
    expect(webhook.reviews.slice(before).map((r) => r.spec.user)).toEqual(['alice-cache', 'bob-cache']);
    const metrics = (await get('/metrics', 'alice')).text;
    expect(Number(/^orchd_authorization_webhook_cache_hits_total\{name="hook"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(6);
    expect(metrics).toMatch(/^orchd_authorization_webhook_evaluations_total\{name="hook",result="success"\} \d+$/m);
    expect(Number(/^orchd_authorization_decisions_total\{type="Webhook",name="hook",decision="noOpinion"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    expect(metrics.match(/^# TYPE orchd_authorization_decisions_total counter$/gm)).toHaveLength(1);
  });

  it('lets system:masters through without asking the webhook', async () => {
    const before = webhook.hits;
    expect((await get(`${EVENTS}`, 'root', ['system:masters'])).status).toBe(200);
    expect((await get('/version', 'root', ['system:masters'])).status).toBe(200);
    expect(webhook.hits).toBe(before);
  });

  it('authorizes a WebSocket watch before upgrading it', async () => {
    const upgrade = async (user: string) =>
      new Promise<number>((resolve) => {
        void as(user).then((h) => {
          const token = h.authorization.slice('Bearer '.length);
          const ws = new WebSocket(
            `${s.server.url.replace('https', 'wss')}${EVENTS}?watch=true`,
            [`base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`, 'base64.binary.k8s.io'],
            {
              ca: s.ca,
            },
          );
          ws.on('open', () => {
            ws.close();
            resolve(101);
          });
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.on('error', () => resolve(-1));
        });
      });
    const watches = webhook.reviews.length;
    expect(await upgrade('bob')).toBe(403);
    expect(await upgrade('alice')).toBe(101);
    expect(webhook.reviews.slice(watches).map((r) => [r.spec.user, r.spec.resourceAttributes.verb])).toEqual([
      ['bob', 'watch'],
      ['alice', 'watch'],
    ]);
  });

  it('kubectl with --token is allowed or refused', async () => {
    const kubectl = async (user: string, args: string[]) => {
      const common = ['--server', s.server.url, '--certificate-authority', join(dir, 'main-data', 'apiserver.crt'), '--cache-dir', join(dir, `kube-cache-${user}`)];
      const token = (await as(user)).authorization.slice(7);
      return runKubectl([...common, '--token', token, ...args], { binary: versionedKubectl('1.33'), env: { KUBECONFIG: join(dir, 'none'), HOME: dir } });
    };
    const ok = await kubectl('alice', ['get', 'events.events.orch.io', '-n', 'default']);
    expect(ok.stderr).toMatch(/^(No resources found in default namespace\.\n)?$/);
    expect(ok.code).toBe(0);
    const refused = await kubectl('bob', ['get', 'events.events.orch.io', '-n', 'default']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'Error from server (Forbidden): events.events.orch.io is forbidden: User "bob" cannot list resource "events" in API group "events.orch.io" in the namespace "default": bob has no grant',
    );
  });
});

describe('the authorizer of admission expressions', () => {
  it("answers a ValidatingAdmissionPolicy's authorizer checks with the chain, for the requesting user", async () => {
    const kubeconfig = await webhook.kubeconfig(dir, 'admission.kubeconfig');
    const s = await start('admission', [webhookEntry('hook', kubeconfig)]);
    const root = await as('root', ['system:masters']);
    const post = async (path: string, body: unknown, headers: Record<string, string>) => httpsCall(s.server.url, s.ca, 'POST', path, headers, body);
    expect(
      (
        await post(
          `${ADM}/validatingadmissionpolicies`,
          {
            apiVersion: 'admissionregistration.orch.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'event-writers' },
            spec: {
              matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] }] },
              validations: [
                { expression: "authorizer.group('').resource('events').namespace('default').check('create').allowed()", message: 'only event writers may create namespaces', reason: 'Forbidden' },
              ],
            },
          },
          root,
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await post(
          `${ADM}/validatingadmissionpolicybindings`,
          {
            apiVersion: 'admissionregistration.orch.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'event-writers' },
            spec: { policyName: 'event-writers', validationActions: ['Deny'] },
          },
          root,
        )
      ).status,
    ).toBe(201);
    // Everyone may create namespaces; only alice* may create events.
    webhook.decide = (r) => (r.spec.resourceAttributes?.resource === 'events' ? defaultDecision(r) : { allowed: true });
    const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const before = webhook.reviews.length;
    const carol = await post('/api/v1/namespaces', namespace('carols'), await as('carol'));
    expect(carol.status).toBe(403);
    expect(carol.body.message).toBe(
      "namespaces \"carols\" is forbidden: ValidatingAdmissionPolicy 'event-writers' with binding 'event-writers' denied request: only event writers may create namespaces",
    );
    const alice = await post('/api/v1/namespaces', namespace('alices'), await as('alice-admin'));
    expect(alice.status, alice.text).toBe(201);
    const checks = webhook.reviews.slice(before).filter((r) => r.spec.resourceAttributes?.resource === 'events');
    expect(checks.map((r) => [r.spec.user, r.spec.resourceAttributes])).toEqual([
      ['carol', { namespace: 'default', verb: 'create', resource: 'events' }],
      ['alice-admin', { namespace: 'default', verb: 'create', resource: 'events' }],
    ]);
    // The answer is cached: carol's second try is refused without asking again.
    const again = await post('/api/v1/namespaces', namespace('carols-2'), await as('carol'));
    expect(again.status).toBe(403);
    expect(webhook.reviews.slice(before).filter((r) => r.spec.resourceAttributes?.resource === 'events')).toHaveLength(2);
  });
});

describe('reloading the authorization configuration', () => {
  const until = (what: string, check: () => Promise<boolean>) => eventually(check, { stepMs: 50, what });

  it('swaps in a changed valid file and keeps the last good chain when the new one is broken', async () => {
    const kubeconfig = await webhook.kubeconfig(dir, 'reload.kubeconfig');
    const s = await start('reload', [webhookEntry('hook', kubeconfig)], 100);
    const status = async (user: string, groups: string[] = []) => (await httpsCall(s.server.url, s.ca, 'GET', EVENTS, await as(user, groups))).status;
    const gauge = async (name: string) => {
      const text = (await httpsCall(s.server.url, s.ca, 'GET', '/metrics', await as('root', ['system:masters']))).text;
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    };
    expect(await status('bob')).toBe(403);

    await replaceFile(s.authzFile, stringify(authorization([webhookEntry('hook', kubeconfig), { type: 'AlwaysAllow', name: 'everyone' }])));
    await until('the widened chain', async () => (await status('bob')) === 200);
    expect(await gauge('orchd_authorization_config_reloads_succeeded')).toBe(1);
    expect(await status('mallory')).toBe(403);

    // A match condition that does not compile: the file is valid, the chain cannot be built.
    await replaceFile(s.authzFile, stringify(authorization([webhookEntry('hook', kubeconfig, { matchConditions: [{ expression: 'request.user ==' }] })])));
    await until('the failed reload', async () => (await gauge('orchd_authorization_config_reloads_failed')) >= 1);
    expect(await gauge('orchd_authorization_config_last_reload_success')).toBe(0);
    expect(await status('bob')).toBe(200);

    // Breaks a rule of the document: kept again.
    await replaceFile(s.authzFile, stringify(authorization([])));
    await until('the second failed reload', async () => (await gauge('orchd_authorization_config_reloads_failed')) >= 2);
    expect(await status('bob')).toBe(200);

    // A webhook that cannot be reached, failurePolicy Deny: the decision cannot be made, a 500.
    const down = await new SarWebhook().start();
    const downFile = await down.kubeconfig(dir, 'down.kubeconfig');
    await down.stop();
    await replaceFile(s.authzFile, stringify(authorization([webhookEntry('down', downFile, { failurePolicy: 'Deny' }), { type: 'AlwaysAllow', name: 'everyone' }])));
    await until('the unreachable webhook', async () => (await status('bob')) === 500);
    const refused = await httpsCall(s.server.url, s.ca, 'GET', EVENTS, await as('bob'));
    expect(refused.body).toMatchObject({
      reason: 'InternalError',
      code: 500,
      message: expect.stringMatching(/^Internal error occurred: Post "https:\/\/127\.0\.0\.1:\d+\/authorize": .*ECONNREFUSED/),
    });
    expect(await gauge('orchd_authorization_config_reloads_succeeded')).toBe(2);
  });

  it('keeps the last good chain when a new file drops a type other than Webhook the server started with', async () => {
    const s = await start('required', [{ type: 'AlwaysDeny', name: 'alwaysdeny' }], 100);
    const status = async () => (await httpsCall(s.server.url, s.ca, 'GET', EVENTS, await as('bob'))).status;
    const failed = async () => {
      const text = (await httpsCall(s.server.url, s.ca, 'GET', '/metrics', await as('root', ['system:masters']))).text;
      return Number(/^orchd_authorization_config_reloads_failed (\d+)$/m.exec(text)?.[1]);
    };
    expect(await status()).toBe(403);
    await replaceFile(s.authzFile, stringify(authorization([{ type: 'AlwaysAllow', name: 'alwaysallow' }])));
    await until('the refused reload', async () => (await failed()) === 1);
    expect(await status()).toBe(403);
    await replaceFile(
      s.authzFile,
      stringify(
        authorization([
          { type: 'AlwaysDeny', name: 'alwaysdeny' },
          { type: 'AlwaysAllow', name: 'alwaysallow' },
        ]),
      ),
    );
    await until('the reload keeping AlwaysDeny', async () => (await status()) === 200);
  });

  it('refuses to start on a chain it cannot build, naming the file and field', async () => {
    await expect(
      start('incluster', [{ ...webhookEntry('x', '/dev/null'), webhook: { ...(webhookEntry('x', '/dev/null').webhook as object), connectionInfo: { type: 'InClusterConfig' } } }]),
    ).rejects.toThrow(/InClusterConfig is not available: orchd does not run inside a cluster/);
  });
});

describe('orchd with RBAC deciding', () => {
  let s: Started;
  const call = async (method: string, path: string, user: string, groups: string[] = [], body?: unknown) => httpsCall(s.server.url, s.ca, method, path, await as(user, groups), body);
  const admin = (method: string, path: string, body?: unknown) => call(method, path, 'root', ['system:masters'], body);
  const RBAC = '/apis/rbac.authorization.orch.io/v1';

  beforeAll(async () => {
    s = await start('rbac', [{ type: 'RBAC', name: 'rbac' }]);
    expect((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } })).status).toBe(201);
  });

  it('grants what the bound roles say and nothing else; the bootstrap roles open discovery and /version', async () => {
    // public-info-viewer and discovery are bootstrapped for every authenticated user.
    expect((await call('GET', '/version', 'carol')).status).toBe(200);
    expect((await call('GET', '/apis', 'carol')).status).toBe(200);
    const refused = await call('GET', '/apis/events.orch.io/v1/namespaces/team/events', 'carol');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^events.events.orch.io is forbidden: User "carol" cannot list resource "events" in API group "events.orch.io" in the namespace "team"/);
    const role = {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'Role',
      metadata: { name: 'event-reader', namespace: 'team' },
      rules: [{ apiGroups: ['events.orch.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] }],
    };
    expect((await admin('POST', `${RBAC}/namespaces/team/roles`, role)).status).toBe(201);
    const binding = {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'carol-reads', namespace: 'team' },
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'event-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.orch.io', kind: 'User', name: 'carol' }],
    };
    expect((await admin('POST', `${RBAC}/namespaces/team/rolebindings`, binding)).status).toBe(201);
    expect((await call('GET', '/apis/events.orch.io/v1/namespaces/team/events', 'carol')).status).toBe(200);
    expect((await call('GET', '/apis/events.orch.io/v1/namespaces/default/events', 'carol')).status).toBe(403);
    expect((await call('DELETE', '/apis/events.orch.io/v1/namespaces/team/events/x', 'carol')).status).toBe(403);
  });

  it('refuses a role that grants more than its author holds (escalation prevention)', async () => {
    const grantAll = { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'everything', namespace: 'team' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
    const maker = {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'dave-makes-roles', namespace: 'team' },
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'role-maker' },
      subjects: [{ apiGroup: 'rbac.authorization.orch.io', kind: 'User', name: 'dave' }],
    };
    const makerRole = {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'role-maker' },
      rules: [{ apiGroups: ['rbac.authorization.orch.io'], resources: ['roles'], verbs: ['create'] }],
    };
    expect((await admin('POST', `${RBAC}/clusterroles`, makerRole)).status).toBe(201);
    expect((await admin('POST', `${RBAC}/namespaces/team/rolebindings`, maker)).status).toBe(201);
    const r = await call('POST', `${RBAC}/namespaces/team/roles`, 'dave', [], grantAll);
    expect(r.status, r.text).toBe(403);
    expect(r.body.message).toMatch(/attempting to grant RBAC permissions not currently held/);
    // What dave holds himself he may grant.
    const small = { ...grantAll, metadata: { name: 'makers', namespace: 'team' }, rules: [{ apiGroups: ['rbac.authorization.orch.io'], resources: ['roles'], verbs: ['create'] }] };
    expect((await call('POST', `${RBAC}/namespaces/team/roles`, 'dave', [], small)).status).toBe(201);
  });
});
